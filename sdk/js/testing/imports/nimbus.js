// Stand-in of `reactor:host/nimbus@0.2.1`, answered by the installed FakeHost.
import { current } from '../current.js';

export const publish = (key, value, to) => current('nimbus.publish').publish(key, value, to);
export const unpublish = (key) => current('nimbus.unpublish').unpublish(key);
export const published = (prefix) => current('nimbus.published').published(prefix);
export const statuses = (prefix) => current('nimbus.statuses').statuses(prefix);
export const agentStatuses = (prefix, agent) =>
  current('nimbus.agentStatuses').agentStatuses(prefix, agent);
