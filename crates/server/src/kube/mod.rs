//! The Kubernetes API beside `/v1` (`/version`, `/api`, `/apis/...`), for unmodified kubectl:
//! discovery, and each Kind's objects as a cluster-scoped resource. The shapes (naming,
//! mapping, Status errors, tables, patches, watch events) are `reactor-kube`'s; the routes
//! here call the store, the admission and the audit as `/v1`'s do.

mod apply;
mod discovery;
mod reply;
mod resources;
mod target;
mod watch;
mod write;

pub(crate) use reply::to_status;

use super::AppState;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The routes of the Kubernetes API.
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(discovery::version))
        .routes(routes!(discovery::core))
        .routes(routes!(discovery::groups))
        .routes(routes!(discovery::group))
        .routes(routes!(discovery::resources))
        .routes(routes!(discovery::openapi_index))
        .routes(routes!(discovery::openapi))
        .routes(routes!(
            resources::list,
            resources::create,
            resources::delete_collection
        ))
        .routes(routes!(
            resources::get,
            resources::replace,
            resources::patch,
            resources::delete
        ))
        .routes(routes!(
            resources::get_status,
            resources::replace_status,
            resources::patch_status
        ))
}
