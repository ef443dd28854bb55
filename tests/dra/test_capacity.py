"""Consumable capacity's request policies: what one allocation of a shareable device takes."""

from __future__ import annotations

import pytest

from kschedlib.dra._capacity import consumed, consumed_amount, violates
from kschedlib.model.dra import CapacityRequestPolicy, Device
from kschedlib.model.quantity import Quantity, parse_quantity

q = parse_quantity
RANGE = CapacityRequestPolicy(q("2"), (), True, q("2"), q("4"), q("2"))
VALUES = CapacityRequestPolicy(q("1"), (q("1"), q("3")))
ZERO = CapacityRequestPolicy(q("0"), (q("0"),))


@pytest.mark.parametrize(("requested", "policy", "taken", "refused"), [
    pytest.param(None, None, "10", False, id="nothing-asked-takes-all"),
    pytest.param(None, RANGE, "2", False, id="nothing-asked-takes-the-default"),
    pytest.param("3", None, "3", False, id="no-policy-takes-what-is-asked"),
    pytest.param("1", RANGE, "2", False, id="below-the-range-takes-its-minimum"),
    pytest.param("3", RANGE, "4", False, id="rounded-up-to-a-step"),
    pytest.param("6", RANGE, "6", True, id="above-the-range-is-refused"),
    pytest.param("2", VALUES, "3", False, id="rounded-up-to-a-valid-value"),
    pytest.param("5", VALUES, "5", True, id="above-every-valid-value-is-refused"),
    pytest.param(None, ZERO, "0", False, id="a-zero-default"),
    pytest.param("1", ZERO, "1", True, id="more-than-a-zero-policy-allows"),
    pytest.param("3", CapacityRequestPolicy(None, (), True, q("2")), "3", False, id="range-without-step"),
    pytest.param("3", CapacityRequestPolicy(), "3", False, id="empty-policy"),
])
def test_consumed_amount(requested: str | None, policy: CapacityRequestPolicy | None, taken: str,
                         refused: bool) -> None:
    amount = consumed_amount(q(requested) if requested is not None else None, q("10"), policy)
    assert amount == q(taken)
    assert violates(amount, policy) is refused


def test_off_step_and_range_without_maximum() -> None:
    assert violates(q("5"), CapacityRequestPolicy(None, (), True, q("2"), None, q("2")))
    assert not violates(q("6"), CapacityRequestPolicy(None, (), True, q("2"), None, q("2")))
    assert not violates(q("7"), CapacityRequestPolicy(None, (), True, q("2")))


def test_consumed_per_capacity() -> None:
    device = Device("nic", capacity={"bw": q("10G"), "queues": q("8")}, capacity_policies={"queues": VALUES})
    assert consumed({"bw": q("1G")}, device) == {"bw": q("1G"), "queues": Quantity.from_int(1)}
