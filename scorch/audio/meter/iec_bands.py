"""IEC 61260's (ANSI S1.11) base-ten band set, by nominal centre. Pure constants.

Third-octave centres are 1000 * 10^(k/10) Hz from 25 Hz to 20 kHz; octaves are every
third of them, 31.5 Hz to 16 kHz. Each band is named by its nominal centre.
"""

from __future__ import annotations

THIRD_NAMES = ("25", "31.5", "40", "50", "63", "80", "100", "125", "160", "200", "250",
               "315", "400", "500", "630", "800", "1k", "1.25k", "1.6k", "2k", "2.5k",
               "3.15k", "4k", "5k", "6.3k", "8k", "10k", "12.5k", "16k", "20k")
THIRDS = tuple(1000.0 * 10 ** (k / 10) for k in range(-16, 14))
OCTAVE_NAMES = THIRD_NAMES[1::3]
OCTAVES = THIRDS[1::3]
