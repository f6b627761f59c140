// Stand-in of `reactor:host/config@0.2.1`, answered by the installed FakeHost.
import { current } from '../current.js';

export const get = () => current('config.get').configText;
export const revision = () => current('config.revision').configRevision;
