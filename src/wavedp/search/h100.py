"""The predictor's built-in constants: ``wavedp calibrate`` on an H100 80GB HBM3 (132 SMs),
2026-11-23, used where no calibration of this machine exists."""

#: full-device lane-cells/s per kernel shape "G,R,packing"
RATES = {
    "4,4,packed": 6.05e+12, "4,8,packed": 5.37e+12, "4,12,packed": 4.76e+12,
    "4,16,packed": 4.47e+12, "4,20,packed": 4.25e+12, "4,24,packed": 4.03e+12,
    "4,28,packed": 3.98e+12, "4,32,packed": 3.83e+12, "8,4,packed": 4.97e+12,
    "8,8,packed": 3.7e+12, "8,12,packed": 3.45e+12, "8,16,packed": 3.38e+12,
    "8,20,packed": 3.34e+12, "8,24,packed": 3.27e+12, "8,28,packed": 3.26e+12,
    "8,32,packed": 3.2e+12, "16,4,packed": 3.34e+12, "16,8,packed": 2.77e+12,
    "16,12,packed": 2.76e+12, "16,16,packed": 2.84e+12, "16,20,packed": 2.88e+12,
    "16,24,packed": 2.87e+12, "16,28,packed": 2.91e+12, "16,32,packed": 2.88e+12,
    "32,4,packed": 2.5e+12, "32,8,packed": 2.32e+12, "32,12,packed": 2.42e+12,
    "32,16,packed": 2.54e+12, "4,4,wide": 6.1e+12, "4,8,wide": 5.65e+12,
    "4,12,wide": 5.07e+12, "4,16,wide": 4.6e+12, "4,20,wide": 4.38e+12,
    "4,24,wide": 4.08e+12, "4,28,wide": 4.07e+12, "4,32,wide": 3.92e+12,
    "8,4,wide": 4.92e+12, "8,8,wide": 3.87e+12, "8,12,wide": 3.62e+12,
    "8,16,wide": 3.5e+12, "8,20,wide": 3.46e+12, "8,24,wide": 3.33e+12,
    "8,28,wide": 3.34e+12, "8,32,wide": 3.28e+12, "16,4,wide": 3.31e+12,
    "16,8,wide": 2.92e+12, "16,12,wide": 2.91e+12, "16,16,wide": 2.92e+12,
    "16,20,wide": 2.98e+12, "16,24,wide": 2.94e+12, "16,28,wide": 2.97e+12,
    "16,32,wide": 2.96e+12, "32,4,wide": 2.48e+12, "32,8,wide": 2.43e+12,
    "32,12,wide": 2.55e+12, "32,16,wide": 2.62e+12,
}
#: one group alone, its first pass, lane-cells/s per shape "G,R"
SINGLE = {
    "4,4": 7.48e+08, "4,8": 6.76e+08, "4,12": 7.26e+08, "4,16": 7.2e+08, "4,20": 7.64e+08,
    "4,24": 7.28e+08, "4,28": 7.56e+08, "4,32": 7.26e+08, "8,4": 9.04e+08, "8,8": 9.03e+08,
    "8,12": 1.04e+09, "8,16": 1.08e+09, "8,20": 1.2e+09, "8,24": 1.17e+09, "8,28": 1.24e+09,
    "8,32": 1.21e+09, "16,4": 1.19e+09, "16,8": 1.33e+09, "16,12": 1.65e+09, "16,16": 1.77e+09,
    "16,20": 2.03e+09, "16,24": 2.04e+09, "16,28": 2.2e+09, "16,32": 2.17e+09, "32,4": 1.9e+09,
    "32,8": 2.33e+09, "32,12": 3.01e+09, "32,16": 3.3e+09,
}
#: a later pass of a group alone, in first passes, per G
LATER = {"4": 1.096, "8": 1.097, "16": 1.078, "32": 1.112}
#: seconds per launch, per profile, per profile word
LAUNCH, UNIT, PROFILE = 0.000805, 2.82e-05, 8.07e-09
