"""The Kubernetes Python client (PyPI `kubernetes`) against reactor-host's Kubernetes API.

Used by host/tests/binary/both_stores/kube_python.rs as a user would use the client: the kubeconfig
`serve` writes, `CustomObjectsApi` for a kind of the server, and a watch that resumes from the
last resourceVersion it saw and lists again when that revision has expired (410).

    kubernetes_client.py KUBECONFIG list
    kubernetes_client.py KUBECONFIG create NAME SIZE
    kubernetes_client.py KUBECONFIG watch RESOURCE_VERSION COUNT

Each prints JSON lines: `list` the list's resourceVersion and names; `create` the object made;
`watch` each event (type, name, size, resourceVersion) until COUNT events, a `resume` line each
time the server ends a watch (after `timeoutSeconds`), and a `relist` line after a 410.
"""

import json
import sys

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

GROUP, VERSION, PLURAL = "reactor.dev", "v1", "widgets"


def emit(**fields):
    print(json.dumps(fields), flush=True)


def listing(api):
    answer = api.list_cluster_custom_object(GROUP, VERSION, PLURAL)
    names = sorted(item["metadata"]["name"] for item in answer["items"])
    return answer["metadata"]["resourceVersion"], names


def list_widgets(api):
    resource_version, names = listing(api)
    emit(resourceVersion=resource_version, names=names)


def create(api, name, size):
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Widget",
        "metadata": {"name": name, "labels": {"made-by": "python"}},
        "spec": {"size": int(size)},
    }
    made = api.create_cluster_custom_object(GROUP, VERSION, PLURAL, body)
    emit(
        name=made["metadata"]["name"],
        uid=made["metadata"]["uid"],
        resourceVersion=made["metadata"]["resourceVersion"],
        size=made["spec"]["size"],
    )


def watch_from(api, resource_version, count):
    seen = 0
    while seen < count:
        try:
            # The server ends each watch after a second; the loop resumes from the last
            # resourceVersion seen (an event's or a bookmark's).
            stream = watch.Watch().stream(
                api.list_cluster_custom_object,
                GROUP,
                VERSION,
                PLURAL,
                resource_version=resource_version,
                allow_watch_bookmarks=True,
                timeout_seconds=1,
            )
            for event in stream:
                obj = event["object"]
                resource_version = obj["metadata"]["resourceVersion"]
                if event["type"] == "BOOKMARK":
                    continue
                emit(
                    type=event["type"],
                    name=obj["metadata"]["name"],
                    size=obj.get("spec", {}).get("size"),
                    resourceVersion=resource_version,
                )
                seen += 1
                if seen == count:
                    return
            emit(type="resume", resourceVersion=resource_version)
        except ApiException as e:
            if e.status != 410:
                raise
            # Expired: what was missed is in a fresh list; watch on from its revision.
            resource_version, names = listing(api)
            emit(type="relist", resourceVersion=resource_version, names=names)


def main():
    kubeconfig, command, *args = sys.argv[1:]
    config.load_kube_config(config_file=kubeconfig)
    api = client.CustomObjectsApi()
    {"list": list_widgets, "create": create, "watch": lambda a, rv, n: watch_from(a, rv, int(n))}[
        command
    ](api, *args)


if __name__ == "__main__":
    main()
