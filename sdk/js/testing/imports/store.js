// Stand-in of `reactor:host/store@0.2.1`, answered by the installed FakeHost.
import { current } from '../current.js';

export const get = (kind, name) => current('store.get').storeGet(kind, name);
export const list = (kind, selector) => current('store.list').storeList(kind, selector);
export const apply = (obj) => current('store.apply').storeApply(obj);
const remove = (kind, name) => current('store.delete').storeDelete(kind, name);
export { remove as delete };
export const setStatus = (status) => current('store.setStatus').setStatus(status);
