"""The predictor's built-in constants: ``wavedp calibrate`` on an H100 80GB HBM3 (132 SMs),
2026-11-23 (the scan kernel with G a template parameter, the profiles built on the GPU),
used where no calibration of this machine exists."""

#: full-device lane-cells/s per kernel shape "G,R,packing"
RATES = {
    "4,4,packed": 6.31e+12, "4,8,packed": 6.1e+12, "4,12,packed": 5.65e+12, "4,16,packed":
    5.14e+12, "4,20,packed": 4.99e+12, "4,24,packed": 4.8e+12, "4,28,packed": 4.62e+12,
    "4,32,packed": 4.57e+12, "8,4,packed": 4.8e+12, "8,8,packed": 4.14e+12, "8,12,packed":
    4.06e+12, "8,16,packed": 3.91e+12, "8,20,packed": 3.98e+12, "8,24,packed": 3.85e+12,
    "8,28,packed": 3.82e+12, "8,32,packed": 3.84e+12, "16,4,packed": 3.2e+12, "16,8,packed":
    3.11e+12, "16,12,packed": 3.26e+12, "16,16,packed": 3.27e+12, "16,20,packed": 3.42e+12,
    "16,24,packed": 3.38e+12, "16,28,packed": 3.39e+12, "16,32,packed": 3.45e+12,
    "32,4,packed": 2.39e+12, "32,8,packed": 2.59e+12, "32,12,packed": 2.84e+12,
    "32,16,packed": 2.89e+12, "4,4,wide": 6.37e+12, "4,8,wide": 6.35e+12, "4,12,wide":
    5.82e+12, "4,16,wide": 5.58e+12, "4,20,wide": 5.42e+12, "4,24,wide": 5.12e+12,
    "4,28,wide": 4.98e+12, "4,32,wide": 4.7e+12, "8,4,wide": 5.11e+12, "8,8,wide": 4.5e+12,
    "8,12,wide": 4.33e+12, "8,16,wide": 4.11e+12, "8,20,wide": 4.24e+12, "8,24,wide":
    4.15e+12, "8,28,wide": 4.02e+12, "8,32,wide": 3.9e+12, "16,4,wide": 3.42e+12,
    "16,8,wide": 3.4e+12, "16,12,wide": 3.47e+12, "16,16,wide": 3.44e+12, "16,20,wide":
    3.64e+12, "16,24,wide": 3.63e+12, "16,28,wide": 3.58e+12, "16,32,wide": 3.51e+12,
    "32,4,wide": 2.56e+12, "32,8,wide": 2.82e+12, "32,12,wide": 3.04e+12, "32,16,wide":
    2.95e+12,
}
#: one group alone, its first pass, lane-cells/s per shape "G,R"
SINGLE = {
    "4,4": 7.19e+08, "4,8": 6.79e+08, "4,12": 7e+08, "4,16": 7.38e+08, "4,20": 7.92e+08,
    "4,24": 7.81e+08, "4,28": 7.84e+08, "4,32": 7.98e+08, "8,4": 8.33e+08, "8,8": 9.39e+08,
    "8,12": 9.9e+08, "8,16": 1.1e+09, "8,20": 1.2e+09, "8,24": 1.22e+09, "8,28": 1.28e+09,
    "8,32": 1.32e+09, "16,4": 1.1e+09, "16,8": 1.41e+09, "16,12": 1.58e+09, "16,16":
    1.82e+09, "16,20": 2.05e+09, "16,24": 2.12e+09, "16,28": 2.27e+09, "16,32": 2.37e+09,
    "32,4": 1.77e+09, "32,8": 2.49e+09, "32,12": 2.92e+09, "32,16": 3.43e+09,
}
#: a later pass of a group alone, in first passes, per G
LATER = {"4": 1.211, "8": 1.215, "16": 1.218, "32": 1.129}
#: seconds per launch, per profile, per profile word, per subject
LAUNCH, UNIT, PROFILE, SUBJECT = 0.00067, 7.86e-07, 9.43e-10, 1.11e-08
#: a group's lane-cells/s with k = 1, 2, ... blocks on its SM, per shape "G,R,packing"
PACKING: dict[str, list[float]] = {}
#: a later pass with other groups on the SM, in first passes, per G
LATER_SHARED = {"4": 1.06, "8": 1.06, "16": 1.06, "32": 1.06}
#: seconds of a kernel's fixed start
START = 0.0
