/* A small JSON reader and writer for C guests: parse a document into a tree of rj_value,
 * read and change it, write it back. Numbers keep their text, so a document read and
 * written again keeps every number as it was. Out of memory aborts (the guest traps and
 * the host runs the call again on a fresh instance). */
#ifndef REACTOR_SDK_JSON_H
#define REACTOR_SDK_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    RJ_NULL,
    RJ_BOOL,
    RJ_NUMBER,
    RJ_STRING,
    RJ_ARRAY,
    RJ_OBJECT,
} rj_type;

typedef struct rj_value rj_value;

struct rj_value {
    rj_type type;
    /* RJ_BOOL */
    bool boolean;
    /* RJ_STRING: the decoded UTF-8 text; RJ_NUMBER: the number as written. NUL-terminated,
     * `len` bytes (a string may hold \u0000, so use `len`, not strlen). */
    char *text;
    size_t len;
    /* RJ_ARRAY: `count` elements in `items`; RJ_OBJECT: `count` members, names in `keys`
     * (NUL-terminated), values in `items`, in document order. */
    char **keys;
    rj_value **items;
    size_t count;
    size_t cap;
};

/* Parses `len` bytes of JSON. On success returns the tree (free it with rj_free); on
 * failure returns NULL and writes a one-line message with the byte offset into `error`. */
rj_value *rj_parse(const char *text, size_t len, char *error, size_t error_size);

/* Frees a tree and everything in it; NULL is allowed. */
void rj_free(rj_value *value);

/* The member `key` of an object; NULL when absent or when `object` is not an object. */
rj_value *rj_get(const rj_value *object, const char *key);

/* Whether `value` is a string equal to the NUL-terminated `s`. */
bool rj_is_string(const rj_value *value, const char *s);

/* New values, owned by the caller until given to rj_set / rj_push. */
rj_value *rj_null(void);
rj_value *rj_object(void);
rj_value *rj_array(void);
rj_value *rj_string(const char *s);
rj_value *rj_string_n(const char *s, size_t len);
rj_value *rj_int(int64_t n);

/* Sets member `key` of `object` to `value`, replacing (and freeing) an existing one; takes
 * ownership of `value`. `object` must be an RJ_OBJECT. */
void rj_set(rj_value *object, const char *key, rj_value *value);

/* Appends `value` to `array` (an RJ_ARRAY); takes ownership of `value`. */
void rj_push(rj_value *array, rj_value *value);

/* Writes `value` as compact JSON; returns a malloc'd NUL-terminated text, its length in
 * `*len` (when not NULL). */
char *rj_write(const rj_value *value, size_t *len);

#endif
