//! Kinds as a user types them: `get tenant` and `get tenants` find the kind `Tenant` when a
//! Kind object, a host kind or a reactor names it so (an exact name first, then one that
//! differs only in case, then its plural), as kubectl resolves resource names; a kind nobody
//! knows is answered with the nearest known ones.

use super::client_args::explain;
use crate::api::Client;
use crate::nimbus::{AGENT_KIND, ITEM_KIND, REPORT_KIND};
use crate::object::{KIND, KindSpec, Object, plural};
use crate::runtime::{Described, Watch};

/// A kind as resolved, with its Kind object's spec when it has one.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub kind: String,
    pub spec: Option<KindSpec>,
    /// Whether a Kind object, the host or a reactor knows the kind.
    pub known: bool,
    /// The known kinds nearest to what was typed, when it is not known.
    pub nearest: Vec<String>,
}

impl Resolved {
    /// An error for a kind nobody knows: `get` says so rather than print an empty table.
    pub fn unknown(&self) -> anyhow::Error {
        let hint = match self.nearest.as_slice() {
            [] => " (see reactor-host api-resources)".to_owned(),
            [one] => format!("; did you mean {one}?"),
            many => format!("; did you mean one of {}?", many.join(", ")),
        };
        anyhow::anyhow!(
            "the server has no kind {:?}: no Kind object, reactor or object names it{hint}",
            self.kind
        )
    }
}

/// The kind `typed` names: a Kind object's, a host kind or a reactor's kind of that name,
/// else of that name but for case (if only one), else `typed` as it is.
pub async fn resolve(client: &Client, typed: &str) -> anyhow::Result<Resolved> {
    let kinds = kind_objects(client).await?;
    let host = [KIND, AGENT_KIND, ITEM_KIND, REPORT_KIND].map(str::to_owned);
    let mut known: Vec<String> = kinds.iter().map(|o| o.name.clone()).collect();
    known.extend(host);
    // A Kind object's own plural and short names, as kubectl knows them.
    let alias = kinds.iter().find_map(|o| {
        let spec = KindSpec::parse(&o.spec).ok()?;
        let typed = typed.to_lowercase();
        (spec.plural.as_deref() == Some(typed.as_str()) || spec.short_names.contains(&typed))
            .then(|| o.name.clone())
    });
    let (kind, known, nearest) = match alias.or_else(|| pick(&known, typed)) {
        Some(kind) => (kind, true, Vec::new()),
        None => {
            let reactors = reactor_kinds(client).await;
            match pick(&reactors, typed) {
                Some(kind) => (kind, true, Vec::new()),
                None => {
                    known.extend(reactors);
                    (typed.to_owned(), false, nearest(&known, typed))
                }
            }
        }
    };
    let spec = kinds
        .iter()
        .find(|o| o.name == kind)
        .and_then(|o| KindSpec::parse(&o.spec).ok());
    Ok(Resolved {
        kind,
        spec,
        known,
        nearest,
    })
}

/// The kind `typed` names (see [`resolve`]), for the commands that take a kind.
pub async fn canonical(client: &Client, typed: &str) -> anyhow::Result<String> {
    Ok(resolve(client, typed).await?.kind)
}

/// The name of a Kind object as typed (`get kind tenant` finds Kind `Tenant`).
pub async fn resolve_kind_name(client: &Client, typed: &str) -> anyhow::Result<String> {
    let names: Vec<String> = (kind_objects(client).await?)
        .into_iter()
        .map(|o| o.name)
        .collect();
    Ok(pick(&names, typed).unwrap_or_else(|| typed.to_owned()))
}

/// Every Kind object stored.
pub async fn kind_objects(client: &Client) -> anyhow::Result<Vec<Object>> {
    let listing = client.list(KIND, None).await.map_err(explain)?;
    Ok(listing.items)
}

/// The kinds the loaded reactors reconcile, own or watch (none if the server does not say).
async fn reactor_kinds(client: &Client) -> Vec<String> {
    let components = client.components().await.unwrap_or_default();
    components
        .into_iter()
        .filter_map(|c| match c.described {
            Some(Described::Controller(reactor)) => Some(
                reactor
                    .kinds
                    .into_iter()
                    .chain(reactor.watches.into_iter().map(|w| match w {
                        Watch::Owns { kind }
                        | Watch::References { kind, .. }
                        | Watch::Selects { kind, .. } => kind,
                    }))
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect()
}

fn pick(known: &[String], typed: &str) -> Option<String> {
    if known.iter().any(|k| k == typed) {
        return Some(typed.to_owned());
    }
    let only = |mut found: std::vec::IntoIter<&String>| match (found.next(), found.next()) {
        (Some(one), None) => Some(one.clone()),
        _ => None,
    };
    let folded: Vec<&String> = known
        .iter()
        .filter(|k| k.eq_ignore_ascii_case(typed))
        .collect();
    if !folded.is_empty() {
        return only(folded.into_iter());
    }
    let plural: Vec<&String> = known
        .iter()
        .filter(|k| plural(k) == typed.to_lowercase())
        .collect();
    only(plural.into_iter())
}

/// The known kinds within two edits of `typed` (or of its singular), nearest first.
fn nearest(known: &[String], typed: &str) -> Vec<String> {
    let typed = typed.to_lowercase();
    let mut scored: Vec<(usize, &String)> = known
        .iter()
        .map(|k| {
            let by_kind = strsim::levenshtein(&k.to_lowercase(), &typed);
            let by_plural = strsim::levenshtein(&plural(k), &typed);
            (by_kind.min(by_plural), k)
        })
        .filter(|(d, _)| *d <= 2)
        .collect();
    scored.sort();
    let mut names: Vec<String> = scored.into_iter().map(|(_, k)| k.clone()).collect();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::pick;

    #[test]
    fn exact_then_case_folded_then_nothing() {
        let known = [
            "Tenant".to_owned(),
            "Kind".to_owned(),
            "ab".to_owned(),
            "AB".to_owned(),
        ];
        assert_eq!(pick(&known, "Tenant").as_deref(), Some("Tenant"));
        assert_eq!(pick(&known, "tenant").as_deref(), Some("Tenant"));
        assert_eq!(pick(&known, "KIND").as_deref(), Some("Kind"));
        assert_eq!(pick(&known, "Ab"), None);
        assert_eq!(pick(&known, "Tenat"), None);
        assert_eq!(pick(&known, "tenants").as_deref(), Some("Tenant"));
        assert_eq!(pick(&known, "Kinds").as_deref(), Some("Kind"));
    }

    #[test]
    fn nearest_kinds_for_a_typo() {
        let known = ["Policy".to_owned(), "Tenant".to_owned(), "Kind".to_owned()];
        assert_eq!(super::nearest(&known, "Polcy"), ["Policy"]);
        assert_eq!(super::nearest(&known, "policys"), ["Policy"]);
        assert_eq!(super::nearest(&known, "Gadget"), Vec::<String>::new());
    }
}
