//! Roles and the identities requests are made by.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a user may do: `view` reads, `edit` also writes objects, `admin` also manages users,
/// agents, tokens and components.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    View,
    Edit,
    Admin,
}

impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "view" => Ok(Role::View),
            "edit" => Ok(Role::Edit),
            "admin" => Ok(Role::Admin),
            other => Err(format!(
                "unknown role {other:?}: expected admin, edit or view"
            )),
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::View => "view",
            Role::Edit => "edit",
            Role::Admin => "admin",
        })
    }
}

/// Who made a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// A user (the data folder's bootstrap token is the user `admin`).
    User { name: String, role: Role },
    /// An agent that joined, with the labels it was given.
    Agent {
        id: String,
        labels: BTreeMap<String, String>,
    },
}

impl Identity {
    /// The user's role; an agent has none.
    pub fn role(&self) -> Option<Role> {
        match self {
            Identity::User { role, .. } => Some(*role),
            Identity::Agent { .. } => None,
        }
    }

    /// Whether this identity holds at least `role`.
    pub fn at_least(&self, role: Role) -> bool {
        self.role().is_some_and(|r| r >= role)
    }
}

impl std::fmt::Display for Identity {
    /// `user:NAME` or `agent:ID`, as the audit log names them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Identity::User { name, .. } => write!(f, "user:{name}"),
            Identity::Agent { id, .. } => write!(f, "agent:{id}"),
        }
    }
}
