// Module resolution hook (node:module register): `reactor:host/<interface>@0.2.1` becomes
// the stand-in ./imports/<interface>.js; every other specifier resolves as usual.

const HOST = /^reactor:host\/(store|nimbus|log|config)@0\.2\.1$/;

export async function resolve(specifier, context, nextResolve) {
  const match = HOST.exec(specifier);
  if (match) {
    return { url: new URL(`./imports/${match[1]}.js`, import.meta.url).href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
