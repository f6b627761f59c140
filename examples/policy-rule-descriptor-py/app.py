# world: descriptor
"""The policy-rule descriptor (the agent side of the Policy example) in Python: applies the Nimbus items of the
Policy reactors (keys `policy/<policy>/<rule>`, values `{name, action}`) on an agent by
writing each as `/<policy>/<rule>.json` under its southbound root. `retrieve` lists those
files, so a file removed or edited behind the agent's back is drift that resync repairs."""

import json
import os

import reactor_sdk as sdk

PREFIX = "policy/"


def path_of(key: str) -> str:
    """`/<policy>/<rule>.json` for key `policy/<policy>/<rule>`."""
    if not key.startswith(PREFIX):
        raise ValueError(f"key {key} is not under {PREFIX}")
    parts = key[len(PREFIX):].split("/")
    if len(parts) != 2 or any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        raise ValueError(f"key {key} is not policy/<policy>/<rule>")
    return f"/{parts[0]}/{parts[1]}.json"


class KvDescriptor(sdk.Descriptor):
    def describe(self):
        return sdk.descriptor_info("policy-rule", PREFIX)

    def validate(self, key, value):
        path_of(key)
        rule = json.loads(value)
        if not isinstance(rule, dict) or not isinstance(rule.get("action"), str):
            raise ValueError(f"value of {key} is not a rule with an action")

    def create(self, key, value):
        path = path_of(key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(value)
        sdk.log.info(f"wrote {path}")
        return path

    def delete(self, key, value, metadata):
        path = path_of(key)
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
        folder = os.path.dirname(path)
        if os.path.isdir(folder) and not os.listdir(folder):
            os.rmdir(folder)

    def retrieve(self, correlate):
        found = []
        for policy in sorted(os.listdir("/")):
            folder = f"/{policy}"
            if policy.startswith(".") or not os.path.isdir(folder):
                continue
            for file in sorted(os.listdir(folder)):
                if not file.endswith(".json"):
                    continue
                path = f"{folder}/{file}"
                with open(path) as f:
                    value = f.read()
                found.append(sdk.retrieved(f"{PREFIX}{policy}/{file[:-5]}", value, metadata=path))
        return found
