// The FakeHost that answers host calls while one of its callbacks runs.

let host;

/** Makes `next` answer host calls; returns the one it replaces. */
export function install(next) {
  const previous = host;
  host = next;
  return previous;
}

/** The installed host; a call without one throws, saying how to install one. */
export function current(call) {
  if (!host) {
    throw new Error(`reactor-sdk: ${call} called with no host: under node, run the callback `
      + 'through FakeHost of sdk/js/testing.js (e.g. host.onCreate(reactor, obj))');
  }
  return host;
}

/** The installed host, or undefined. */
export function installed() {
  return host;
}
