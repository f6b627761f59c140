// Stand-in of `reactor:host/log@0.2.1`: lines go to the installed FakeHost, or to the
// console when a helper is called with none.
import { installed } from '../current.js';

export function log(level, message) {
  const host = installed();
  if (host) host.logs.push({ level, message });
  else console.log(`[${level}] ${message}`);
}
