"""A flood of big /filter requests, run as its own process: ``python -m tests.extender.flood PORT CLIENTS NODES``.

Each of ``CLIENTS`` threads posts one filter request naming ``NODES`` nodes of about 3 KB each (labels,
annotations, images and conditions as real nodes carry), all at once; the statuses (or the error of
a request the server cut short) go to standard output as one JSON list.
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
from typing import Any

from kschedlib.model.convert import node_to_dict, pod_to_dict
from tests.extender.support import nodes, pod

CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")


def big_node(item: dict[str, Any], index: int) -> dict[str, Any]:
    """A node as a cluster's nodes are: a dozen labels, some annotations, images and conditions."""
    item["metadata"]["labels"].update({f"example.com/label-{k}": f"value-{k}-{index % 7}" for k in range(12)})
    item["metadata"]["annotations"] = {f"example.com/annotation-{k}": "x" * 40 for k in range(6)}
    item["status"]["images"] = [{"names": [f"registry.example.com/team/image-{k}@sha256:{'0' * 64}",
                                           f"registry.example.com/team/image-{k}:v1"],
                                 "sizeBytes": 100_000_000 + k} for k in range(5)]
    item["status"]["conditions"] = [{"type": kind, "status": "False", "reason": f"KubeletHasSufficient{kind}",
                                     "message": f"kubelet has sufficient {kind}",
                                     "lastHeartbeatTime": "2024-01-01T00:00:00Z",
                                     "lastTransitionTime": "2024-01-01T00:00:00Z"} for kind in CONDITIONS]
    return item


def filter_body(node_count: int) -> bytes:
    items = [big_node(node_to_dict(node), i) for i, node in enumerate(nodes(node_count))]
    return json.dumps({"Pod": pod_to_dict(pod()), "Nodes": {"items": items}}).encode()


def flood(port: int, clients: int, node_count: int) -> list[Any]:
    body = filter_body(node_count)
    results: list[Any] = []

    def post() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            connection.request("POST", "/filter", body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            results.append(response.status)
        except (ConnectionResetError, BrokenPipeError):  # shed with a 503 while its body was still coming
            results.append("shed")
        except OSError as exc:
            results.append(type(exc).__name__)
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


if __name__ == "__main__":
    port, clients, node_count = (int(arg) for arg in sys.argv[1:4])
    print(json.dumps(flood(port, clients, node_count)))
