"""14-bit CC and NRPN assembly from 7-bit control changes."""

from __future__ import annotations

import pytest

from midi.assembly import Cc14, Nrpn, NrpnValue

# (CC messages fed in order, what the last one yields)
CC14 = [
    ([(7, 100)], (7, 12800)),
    ([(7, 100), (39, 5)], (7, 12805)),
    ([(7, 100), (39, 5), (7, 1)], (7, 128)),  # a new MSB resets the LSB
    ([(7, 127), (39, 127)], (7, 16383)),
    ([(0, 0), (32, 1)], (0, 1)),
    ([(39, 9)], (7, 9)),  # LSB before any MSB
    ([(64, 127)], None),
]


@pytest.mark.parametrize(("messages", "expected"), CC14)
def test_cc14_assembles_msb_and_lsb(messages, expected):
    assembler = Cc14()
    result = None
    for cc, value in messages:
        result = assembler.feed(cc, value)
    assert result == expected


NRPN = [
    ([(99, 1), (98, 2), (6, 10)], NrpnValue(130, False, 1280, False)),
    ([(99, 1), (98, 2), (6, 10), (38, 5)], NrpnValue(130, False, 1285, True)),
    ([(99, 1), (98, 2), (6, 10), (38, 5), (96, 0)], NrpnValue(130, False, 1413, False)),
    ([(99, 1), (98, 2), (6, 0), (97, 0)], NrpnValue(130, False, 0, False)),
    ([(101, 0), (100, 0), (6, 2)], NrpnValue(0, True, 256, False)),
    ([(99, 1), (98, 2), (101, 127), (100, 127), (6, 3)], None),  # null RPN deselects
    ([(6, 3)], None),  # data entry with nothing selected
    ([(98, 2), (6, 3)], None),  # half a selection
    ([(99, 127), (98, 127), (6, 127), (38, 127)], NrpnValue(16383, False, 16383, True)),
    ([(99, 0), (98, 5), (6, 1), (99, 0), (98, 6), (38, 2)], NrpnValue(6, False, 2, True)),
]


@pytest.mark.parametrize(("messages", "expected"), NRPN)
def test_nrpn_assembles_selection_and_data_entry(messages, expected):
    assembler = Nrpn()
    result = None
    for cc, value in messages:
        result = assembler.feed(cc, value)
    assert result == expected
