#!/usr/bin/env python3
"""A stand-in for a Kubernetes API server's discovery, which `kubectl apply --dry-run=client`
asks before it reads a manifest: which groups, versions and kinds exist, and whether each
object is there already (it never is). Plain HTTP on a loopback port of its own choosing.

  discovery_server.py --ready FILE

Answers, as an API server does:
  /version                        the server's version
  /api, /api/v1                   core v1 with namespaces and configmaps
  /apis, /apis/apps/v1            apps/v1 with daemonsets
  anything else                   404, a Status (so every object is new to it)
Writes its port into the ready file once it accepts.
"""
import argparse
import http.server
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from json_http import answer_json  # noqa: E402



def resource_list(group_version, resources):
    """An APIResourceList of (name, namespaced, kind) for one group version."""
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": [{"name": name, "singularName": "", "namespaced": namespaced, "kind": kind,
                       "verbs": ["create", "get", "list", "patch"]}
                      for name, namespaced, kind in resources],
    }


CORE = resource_list("v1", [("namespaces", False, "Namespace"),
                            ("configmaps", True, "ConfigMap")])
APPS = resource_list("apps/v1", [("daemonsets", True, "DaemonSet")])
ANSWERS = {
    "/version": {"major": "1", "minor": "35", "gitVersion": "v1.35.0"},
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                             "serverAddress": "127.0.0.1"}]},
    "/api/v1": CORE,
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": "apps", "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
         "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}}]},
    "/apis/apps/v1": APPS,
}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path in ANSWERS:
            status, document = 200, ANSWERS[path]
        else:
            status, document = 404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                     "reason": "NotFound", "code": 404,
                                     "message": path + " is not there"}
        answer_json(self, status, document)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ready", required=True)
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.ready, "w") as ready:
        ready.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
