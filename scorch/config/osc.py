"""The ``[osc]`` table: scorch's OSC door, for phones, tablets and other software.

Present, ``scorch run`` listens for OSC at ``listen`` (loopback unless told) and takes
messages from this machine and from the ``allow`` addresses only (docs/controllers.md).
"""

from __future__ import annotations

import ipaddress

from pydantic import Field, field_validator

from scorch.config.tables import parse_listen
from scorch.values import StrictModel, Text

#: The port the OSC door listens on when ``listen`` names none (TouchOSC's default send port).
OSC_PORT = 9000


class OscConfig(StrictModel):
    """The ``[osc]`` table: where scorch hears OSC, from whom, and whom it tells."""

    listen: Text = Field(f"127.0.0.1:{OSC_PORT}", description="ADDR:PORT to listen on (UDP; "
                         f"no address: loopback, no port: {OSC_PORT})")
    allow: tuple[Text, ...] = Field(
        (), max_length=64, description="Addresses or networks (e.g. 192.168.1.20, "
        "192.168.1.0/24) whose messages are taken besides this machine's; others are dropped")
    surfaces: tuple[Text, ...] = Field(
        (), max_length=64, description="ADDR:PORT of surfaces told every param change from the "
        "start (others register with /scorch/surface/add)")
    rate: int = Field(200, ge=10, le=10000, description="Messages a second a surface is sent at "
                      "most (a morph's newest values win)")

    @field_validator("listen")
    @classmethod
    def _check_listen(cls, value: str) -> str:
        parse_listen(value, OSC_PORT)
        return value

    @field_validator("allow")
    @classmethod
    def _check_allow(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(f"{item!r} is not an address or a network such as "
                                 "192.168.1.0/24") from None
        return value

    @field_validator("surfaces")
    @classmethod
    def _check_surfaces(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            parse_listen(item, OSC_PORT)
        return value

    def address(self) -> tuple[str, int]:
        """The host and port to listen on."""
        return parse_listen(self.listen, OSC_PORT)

    def allowed(self, host: str) -> bool:
        """Whether a datagram from ``host`` is taken: loopback, or an ``allow`` address."""
        try:
            ip = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return False
        if ip.is_loopback or (ip.version == 6 and ip.ipv4_mapped is not None
                              and ip.ipv4_mapped.is_loopback):
            return True
        return any(ip in ipaddress.ip_network(item, strict=False) for item in self.allow)
