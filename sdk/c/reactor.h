/* Helpers for C reactors (world `controller`) over the bindings that `wit-bindgen c`
 * generates into controller.h: strings in and out, errors, logging, JSON documents of
 * spec and status. Ownership rules: see sdk/c/README.md. */
#ifndef REACTOR_SDK_REACTOR_H
#define REACTOR_SDK_REACTOR_H

#include "controller.h"
#include "json.h"

typedef controller_string_t rh_string;
typedef reactor_host_types_object_t rh_object;
typedef exports_reactor_host_reactor_action_t rh_action;
typedef exports_reactor_host_reactor_error_t rh_error;

/* A borrowed view of a NUL-terminated string, for the arguments of imported functions
 * (store, nimbus, log): the call copies what it needs, the caller keeps `s`. Never return
 * it from an export: the host frees returned strings. */
rh_string rh_str(const char *s);

/* A malloc'd NUL-terminated copy of a string the host gave (free it with free()). */
char *rh_cstr(const rh_string *s);

/* Whether the host string `s` equals the NUL-terminated `c`. */
bool rh_eq(const rh_string *s, const char *c);

/* A malloc'd string formatted as printf, for what an export returns. */
rh_string rh_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Logs one formatted record at `level` (REACTOR_HOST_LOG_LEVEL_INFO, ...). */
void rh_log(reactor_host_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets `*err` to a retry (REACTOR_HOST_TYPES_ERROR_RETRY) or permanent
 * (REACTOR_HOST_TYPES_ERROR_PERMANENT) error with a formatted message; returns false, the
 * value a callback returns on failure: `return rh_fail(err, ..., "bad %s", x);`. */
bool rh_fail(rh_error *err, uint8_t tag, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Sets `*ret` to done; returns true, the value a callback returns on success. */
bool rh_done(rh_action *ret);

/* Maps a failed store call as the Rust SDK does (unavailable and conflict retry; not-found,
 * invalid and denied are permanent), frees `e`, and returns false. */
bool rh_store_failed(rh_error *err, reactor_host_store_store_error_t *e);

/* Maps a failed Nimbus call (unavailable retries; invalid and denied are permanent), frees
 * `e`, and returns false. */
bool rh_nimbus_failed(rh_error *err, reactor_host_nimbus_nimbus_error_t *e);

/* Parses a JSON document the host gave (a spec, a status, the config); on failure returns
 * NULL with a one-line message in `error`. */
rj_value *rh_json(const rh_string *s, char *error, size_t error_size);

/* The object's status as a JSON object (a new empty one when it has none or it is not an
 * object), to change some members and keep the others. */
rj_value *rh_status(const rh_object *obj);

/* Writes `status` as the status of the callback's primary object; on failure maps the
 * error into `*err` and returns false. `status` stays the caller's. */
bool rh_set_status(rh_error *err, const rj_value *status);

#endif
