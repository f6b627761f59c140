/* The Policy reactor (the example every language implements) in C: publishes one Nimbus item per rule to the agents its
 * selector matches, records what it did in status, and counts per agent the items applied
 * there. Same behaviour as examples/policy-rust, so either can replace the other. */
#include "reactor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "policy-c"

#define RETRY REACTOR_HOST_TYPES_ERROR_RETRY
#define PERMANENT REACTOR_HOST_TYPES_ERROR_PERMANENT

/* "policy/<policy>/", malloc'd. */
/* Sets status.agents from every agent's reports now, so a count whose report a crash kept from
 * on-agent-status is right again at the next reconcile: the agents with reports, and those counted
 * before at 0 if they have none. No reports and no counts: the key stays out. */
static bool recount(rj_value *status, const char *prefix, rh_error *err) {
    rh_string p = rh_str(prefix);
    reactor_host_nimbus_list_item_status_t statuses;
    reactor_host_nimbus_nimbus_error_t e;
    if (!reactor_host_nimbus_statuses(&p, &statuses, &e)) return rh_nimbus_failed(err, &e);
    rj_value *before = rj_get(status, "agents");
    rj_value *agents = rj_object();
    if (before && before->type == RJ_OBJECT)
        for (size_t i = 0; i < before->count; i++) rj_set(agents, before->keys[i], rj_int(0));
    for (size_t i = 0; i < statuses.len; i++) {
        char *agent = rh_cstr(&statuses.ptr[i].agent);
        rj_value *count = rj_get(agents, agent);
        int64_t n = count ? atoll(count->text) : 0;
        if (statuses.ptr[i].state == REACTOR_HOST_TYPES_ITEM_STATE_APPLIED) n++;
        rj_set(agents, agent, rj_int(n));
        free(agent);
    }
    reactor_host_nimbus_list_item_status_free(&statuses);
    if (agents->count > 0)
        rj_set(status, "agents", agents);
    else
        rj_free(agents);
    return true;
}

static char *prefix_of(const rh_object *obj) {
    size_t n = obj->name.len + sizeof "policy//";
    char *p = malloc(n);
    if (!p) abort();
    snprintf(p, n, "policy/%.*s/", (int)obj->name.len, (const char *)obj->name.ptr);
    return p;
}

/* Parses the spec and checks its shape: `selector` a map of strings, `rules` a list of
 * {name, action} strings (both optional). Returns NULL with a message in `error`. */
static rj_value *spec_of(const rh_object *obj, char *error, size_t size) {
    rj_value *spec = rh_json(&obj->spec, error, size);
    if (!spec) return NULL;
    if (spec->type != RJ_OBJECT) {
        snprintf(error, size, "spec is not an object");
        goto bad;
    }
    rj_value *selector = rj_get(spec, "selector");
    if (selector && selector->type != RJ_NULL) {
        if (selector->type != RJ_OBJECT) {
            snprintf(error, size, "spec.selector is not a map of strings");
            goto bad;
        }
        for (size_t i = 0; i < selector->count; i++) {
            if (selector->items[i]->type != RJ_STRING) {
                snprintf(error, size, "spec.selector is not a map of strings");
                goto bad;
            }
        }
    }
    rj_value *rules = rj_get(spec, "rules");
    if (rules && rules->type != RJ_NULL) {
        if (rules->type != RJ_ARRAY) {
            snprintf(error, size, "spec.rules is not a list");
            goto bad;
        }
        for (size_t i = 0; i < rules->count; i++) {
            rj_value *name = rj_get(rules->items[i], "name");
            rj_value *action = rj_get(rules->items[i], "action");
            if (!name || name->type != RJ_STRING || !action || action->type != RJ_STRING) {
                snprintf(error, size, "rule %zu needs a name and an action", i);
                goto bad;
            }
        }
    }
    return spec;
bad:
    rj_free(spec);
    return NULL;
}

static size_t rule_count(const rj_value *spec) {
    rj_value *rules = rj_get(spec, "rules");
    return rules && rules->type == RJ_ARRAY ? rules->count : 0;
}

void exports_reactor_host_reactor_describe(exports_reactor_host_reactor_info_t *ret) {
    /* Returned strings and lists are freed by the host's post-return: allocate them. */
    controller_string_dup(&ret->name, NAME);
    ret->kinds.len = 1;
    ret->kinds.ptr = malloc(sizeof(rh_string));
    if (!ret->kinds.ptr) abort();
    controller_string_dup(&ret->kinds.ptr[0], "Policy");
    ret->resync_period_ms = 60000;
    ret->handles_delete = true;
    /* No other kinds watched (since reactor:host@0.2.0). */
    ret->watches.len = 0;
    ret->watches.ptr = NULL;
}

bool exports_reactor_host_reactor_validate(rh_object *obj, rh_string *err) {
    char error[160];
    rj_value *spec = spec_of(obj, error, sizeof error);
    bool ok = true;
    if (!spec) {
        *err = rh_format("invalid policy spec: %s", error);
        ok = false;
    } else if (rule_count(spec) == 0) {
        controller_string_dup(err, "policy has no rules");
        ok = false;
    }
    rj_free(spec);
    reactor_host_types_object_free(obj);
    return ok;
}

/* Unpublishes every item under `prefix` whose key is not in `keep` (NULL: all of them). */
static bool unpublish_others(const char *prefix, char **keep, size_t kept, rh_error *err) {
    rh_string p = rh_str(prefix);
    controller_list_string_t published;
    reactor_host_nimbus_nimbus_error_t e;
    if (!reactor_host_nimbus_published(&p, &published, &e)) return rh_nimbus_failed(err, &e);
    bool ok = true;
    for (size_t i = 0; ok && i < published.len; i++) {
        bool wanted = false;
        for (size_t k = 0; !wanted && k < kept; k++) wanted = rh_eq(&published.ptr[i], keep[k]);
        if (wanted) continue;
        if (!reactor_host_nimbus_unpublish(&published.ptr[i], &e)) ok = rh_nimbus_failed(err, &e);
    }
    controller_list_string_free(&published);
    return ok;
}

/* Level-triggered: makes the published items match the rules, whatever was there. */
static bool reconcile(rh_object *obj, rh_action *ret, rh_error *err) {
    char error[160];
    rj_value *spec = spec_of(obj, error, sizeof error);
    if (!spec) return rh_fail(err, PERMANENT, "invalid policy spec: %s", error);
    char *prefix = prefix_of(obj);
    rj_value *selector = rj_get(spec, "selector");
    rj_value *rules = rj_get(spec, "rules");
    size_t count = rule_count(spec);
    size_t selector_count = selector && selector->type == RJ_OBJECT ? selector->count : 0;

    reactor_host_nimbus_target_t to;
    to.tag = REACTOR_HOST_NIMBUS_TARGET_LABELS;
    to.val.labels.len = selector_count;
    to.val.labels.ptr = calloc(selector_count ? selector_count : 1, sizeof *to.val.labels.ptr);
    char **keep = calloc(count ? count : 1, sizeof *keep);
    if (!to.val.labels.ptr || !keep) abort();
    for (size_t i = 0; i < selector_count; i++) {
        to.val.labels.ptr[i].f0 = rh_str(selector->keys[i]);
        to.val.labels.ptr[i].f1 = (rh_string){(uint8_t *)selector->items[i]->text, selector->items[i]->len};
    }

    bool ok = true;
    size_t kept = 0;
    for (size_t i = 0; ok && i < count; i++) {
        rj_value *name = rj_get(rules->items[i], "name");
        rj_value *action = rj_get(rules->items[i], "action");
        size_t key_len = strlen(prefix) + name->len + 1;
        keep[kept] = malloc(key_len);
        if (!keep[kept]) abort();
        snprintf(keep[kept], key_len, "%s%.*s", prefix, (int)name->len, name->text);
        rj_value *value = rj_object();
        rj_set(value, "name", rj_string_n(name->text, name->len));
        rj_set(value, "action", rj_string_n(action->text, action->len));
        size_t value_len;
        char *text = rj_write(value, &value_len);
        rj_free(value);
        rh_string key = rh_str(keep[kept]);
        rh_string v = {(uint8_t *)text, value_len};
        kept++;
        reactor_host_nimbus_nimbus_error_t e;
        if (!reactor_host_nimbus_publish(&key, &v, &to, &e)) ok = rh_nimbus_failed(err, &e);
        free(text);
    }
    if (ok) ok = unpublish_others(prefix, keep, kept, err);
    if (ok) {
        rj_value *status = rh_status(obj);
        rj_set(status, "ruleCount", rj_int((int64_t)kept));
        rj_set(status, "reactor", rj_string(NAME));
        ok = recount(status, prefix, err) && rh_set_status(err, status);
        rj_free(status);
    }
    if (ok) rh_log(REACTOR_HOST_LOG_LEVEL_INFO, "policy %.*s publishes %zu rules", (int)obj->name.len,
                   (const char *)obj->name.ptr, kept);

    for (size_t k = 0; k < kept; k++) free(keep[k]);
    free(keep);
    free(to.val.labels.ptr);
    free(prefix);
    rj_free(spec);
    return ok ? rh_done(ret) : false;
}

bool exports_reactor_host_reactor_on_create(rh_object *obj, rh_action *ret, rh_error *err) {
    bool ok = reconcile(obj, ret, err);
    reactor_host_types_object_free(obj);
    return ok;
}

/* on-update(old, new) is sdk/c's default: on-create(new). */

bool exports_reactor_host_reactor_on_delete(rh_object *obj, rh_action *ret, rh_error *err) {
    char *prefix = prefix_of(obj);
    bool ok = unpublish_others(prefix, NULL, 0, err);
    free(prefix);
    reactor_host_types_object_free(obj);
    return ok ? rh_done(ret) : false;
}

/* Records status.agents.<agent> = how many of this policy's items that agent applied. */
bool exports_reactor_host_reactor_on_agent_status(rh_object *owner, exports_reactor_host_reactor_item_status_t *report,
                                                  rh_action *ret, rh_error *err) {
    char *prefix = prefix_of(owner);
    rh_string p = rh_str(prefix);
    reactor_host_nimbus_list_item_status_t statuses;
    reactor_host_nimbus_nimbus_error_t e;
    bool ok = reactor_host_nimbus_agent_statuses(&p, &report->agent, &statuses, &e);
    free(prefix);
    if (ok) {
        int64_t applied = 0;
        for (size_t i = 0; i < statuses.len; i++)
            if (statuses.ptr[i].state == REACTOR_HOST_TYPES_ITEM_STATE_APPLIED)
                applied++;
        reactor_host_nimbus_list_item_status_free(&statuses);
        rj_value *status = rh_status(owner);
        rj_value *agents = rj_get(status, "agents");
        if (!agents || agents->type != RJ_OBJECT) {
            agents = rj_object();
            rj_set(status, "agents", agents);
        }
        char *agent = rh_cstr(&report->agent);
        rj_set(agents, agent, rj_int(applied));
        free(agent);
        ok = rh_set_status(err, status);
        rj_free(status);
    } else {
        rh_nimbus_failed(err, &e);
    }
    reactor_host_types_object_free(owner);
    reactor_host_types_item_status_free(report);
    return ok ? rh_done(ret) : false;
}
