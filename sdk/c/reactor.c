/* Helpers for C reactors: see reactor.h. */
#include "reactor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rh_string rh_str(const char *s) {
    rh_string out;
    controller_string_set(&out, s);
    return out;
}

char *rh_cstr(const rh_string *s) {
    char *c = malloc(s->len + 1);
    if (!c) abort();
    memcpy(c, s->ptr, s->len);
    c[s->len] = 0;
    return c;
}

bool rh_eq(const rh_string *s, const char *c) {
    size_t n = strlen(c);
    return s->len == n && memcmp(s->ptr, c, n) == 0;
}

static rh_string rh_vformat(const char *fmt, va_list args) {
    va_list copy;
    va_copy(copy, args);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) n = 0;
    rh_string out;
    out.ptr = malloc((size_t)n + 1);
    if (!out.ptr) abort();
    vsnprintf((char *)out.ptr, (size_t)n + 1, fmt, args);
    out.len = (size_t)n;
    return out;
}

rh_string rh_format(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    rh_string out = rh_vformat(fmt, args);
    va_end(args);
    return out;
}

void rh_log(reactor_host_log_level_t level, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    rh_string message = rh_vformat(fmt, args);
    va_end(args);
    reactor_host_log_log(level, &message);
    controller_string_free(&message);
}

bool rh_fail(rh_error *err, uint8_t tag, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    rh_string message = rh_vformat(fmt, args);
    va_end(args);
    err->tag = tag;
    if (tag == REACTOR_HOST_TYPES_ERROR_RETRY) err->val.retry = message;
    else err->val.permanent = message;
    return false;
}

bool rh_done(rh_action *ret) {
    ret->tag = REACTOR_HOST_TYPES_ACTION_DONE;
    return true;
}

#define RETRY REACTOR_HOST_TYPES_ERROR_RETRY
#define PERMANENT REACTOR_HOST_TYPES_ERROR_PERMANENT

bool rh_store_failed(rh_error *err, reactor_host_store_store_error_t *e) {
    switch (e->tag) {
    case REACTOR_HOST_STORE_STORE_ERROR_NOT_FOUND: rh_fail(err, PERMANENT, "object not found"); break;
    case REACTOR_HOST_STORE_STORE_ERROR_CONFLICT:
        rh_fail(err, RETRY, "store conflict: %.*s", (int)e->val.conflict.len, (const char *)e->val.conflict.ptr);
        break;
    case REACTOR_HOST_STORE_STORE_ERROR_INVALID:
        rh_fail(err, PERMANENT, "invalid object: %.*s", (int)e->val.invalid.len, (const char *)e->val.invalid.ptr);
        break;
    case REACTOR_HOST_STORE_STORE_ERROR_DENIED:
        rh_fail(err, PERMANENT, "store denied: %.*s", (int)e->val.denied.len, (const char *)e->val.denied.ptr);
        break;
    default:
        rh_fail(err, RETRY, "store unavailable: %.*s", (int)e->val.unavailable.len,
                (const char *)e->val.unavailable.ptr);
        break;
    }
    reactor_host_store_store_error_free(e);
    return false;
}

bool rh_nimbus_failed(rh_error *err, reactor_host_nimbus_nimbus_error_t *e) {
    switch (e->tag) {
    case REACTOR_HOST_NIMBUS_NIMBUS_ERROR_INVALID:
        rh_fail(err, PERMANENT, "invalid item: %.*s", (int)e->val.invalid.len, (const char *)e->val.invalid.ptr);
        break;
    case REACTOR_HOST_NIMBUS_NIMBUS_ERROR_DENIED:
        rh_fail(err, PERMANENT, "nimbus denied: %.*s", (int)e->val.denied.len, (const char *)e->val.denied.ptr);
        break;
    default:
        rh_fail(err, RETRY, "nimbus unavailable: %.*s", (int)e->val.unavailable.len,
                (const char *)e->val.unavailable.ptr);
        break;
    }
    reactor_host_nimbus_nimbus_error_free(e);
    return false;
}

rj_value *rh_json(const rh_string *s, char *error, size_t error_size) {
    return rj_parse((const char *)s->ptr, s->len, error, error_size);
}

rj_value *rh_status(const rh_object *obj) {
    if (obj->status.is_some) {
        rj_value *status = rh_json(&obj->status.val, NULL, 0);
        if (status && status->type == RJ_OBJECT) return status;
        rj_free(status);
    }
    return rj_object();
}

bool rh_set_status(rh_error *err, const rj_value *status) {
    size_t len;
    char *text = rj_write(status, &len);
    rh_string s = {(uint8_t *)text, len};
    reactor_host_store_store_error_t e;
    bool ok = reactor_host_store_set_status(&s, &e);
    free(text);
    return ok ? true : rh_store_failed(err, &e);
}
