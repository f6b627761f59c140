/* Defaults for the callbacks a C reactor does not define, as the other SDKs give: validate
 * accepts, on-update(old, new) calls on-create(new), on-delete and on-agent-status succeed
 * doing nothing. Weak symbols: a reactor's own definition wins at link time. `describe` and
 * `on-create` have no default. */
#include "reactor.h"

__attribute__((weak)) bool exports_reactor_host_reactor_validate(rh_object *obj, rh_string *err) {
    reactor_host_types_object_free(obj);
    return true;
}

__attribute__((weak)) bool exports_reactor_host_reactor_on_update(rh_object *old, rh_object *new_, rh_action *ret,
                                                                  rh_error *err) {
    reactor_host_types_object_free(old);
    return exports_reactor_host_reactor_on_create(new_, ret, err);
}

__attribute__((weak)) bool exports_reactor_host_reactor_on_delete(rh_object *obj, rh_action *ret, rh_error *err) {
    reactor_host_types_object_free(obj);
    return rh_done(ret);
}

__attribute__((weak)) bool exports_reactor_host_reactor_on_agent_status(
    rh_object *owner, exports_reactor_host_reactor_item_status_t *status, rh_action *ret, rh_error *err) {
    reactor_host_types_object_free(owner);
    reactor_host_types_item_status_free(status);
    return rh_done(ret);
}
