//! Kinds as a user types them: `get tenant` finds the kind `Tenant` when a Kind object, a
//! host kind or a reactor names it so (an exact name first, then one that differs only in
//! case), as kubectl resolves resource names.

use super::client_args::explain;
use crate::api::Client;
use crate::nimbus::{AGENT_KIND, ITEM_KIND, REPORT_KIND};
use crate::object::{KIND, KindSpec, Object};
use crate::runtime::Described;

/// A kind as resolved, with its Kind object's spec when it has one.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub kind: String,
    pub spec: Option<KindSpec>,
}

/// The kind `typed` names: a Kind object's, a host kind or a reactor's kind of that name,
/// else of that name but for case (if only one), else `typed` as it is.
pub async fn resolve(client: &Client, typed: &str) -> anyhow::Result<Resolved> {
    let kinds = kind_objects(client).await?;
    let host = [KIND, AGENT_KIND, ITEM_KIND, REPORT_KIND].map(str::to_owned);
    let mut known: Vec<String> = kinds.iter().map(|o| o.name.clone()).collect();
    known.extend(host);
    let kind = match pick(&known, typed) {
        Some(kind) => kind,
        None => pick(&reactor_kinds(client).await, typed).unwrap_or_else(|| typed.to_owned()),
    };
    let spec = kinds
        .iter()
        .find(|o| o.name == kind)
        .and_then(|o| KindSpec::parse(&o.spec).ok());
    Ok(Resolved { kind, spec })
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

/// The kinds the loaded reactors reconcile (none if the server does not say).
async fn reactor_kinds(client: &Client) -> Vec<String> {
    let components = client.components().await.unwrap_or_default();
    components
        .into_iter()
        .filter_map(|c| match c.described {
            Some(Described::Controller(reactor)) => Some(reactor.kinds),
            _ => None,
        })
        .flatten()
        .collect()
}

fn pick(known: &[String], typed: &str) -> Option<String> {
    if known.iter().any(|k| k == typed) {
        return Some(typed.to_owned());
    }
    let mut folded = known.iter().filter(|k| k.eq_ignore_ascii_case(typed));
    match (folded.next(), folded.next()) {
        (Some(one), None) => Some(one.clone()),
        _ => None,
    }
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
    }
}
