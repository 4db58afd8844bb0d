"""The predictor's built-in constants: ``wavedp calibrate`` on an H100 80GB HBM3 (132 SMs),
2026-11-23, used where no calibration of this machine exists."""

#: full-device lane-cells/s per kernel shape "G,R,packing"
RATES = {
    "4,4,packed": 6.03e+12, "4,8,packed": 5.4e+12, "4,12,packed": 4.77e+12,
    "4,16,packed": 4.46e+12, "4,20,packed": 4.29e+12, "4,24,packed": 4.03e+12,
    "4,28,packed": 3.97e+12, "4,32,packed": 3.83e+12, "8,4,packed": 4.95e+12,
    "8,8,packed": 3.7e+12, "8,12,packed": 3.45e+12, "8,16,packed": 3.38e+12,
    "8,20,packed": 3.34e+12, "8,24,packed": 3.27e+12, "8,28,packed": 3.27e+12,
    "8,32,packed": 3.19e+12, "16,4,packed": 3.34e+12, "16,8,packed": 2.77e+12,
    "16,12,packed": 2.76e+12, "16,16,packed": 2.84e+12, "16,20,packed": 2.87e+12,
    "16,24,packed": 2.87e+12, "16,28,packed": 2.9e+12, "16,32,packed": 2.88e+12,
    "32,4,packed": 2.5e+12, "32,8,packed": 2.32e+12, "32,12,packed": 2.42e+12,
    "32,16,packed": 2.54e+12, "4,4,wide": 6.05e+12, "4,8,wide": 5.58e+12,
    "4,12,wide": 5.02e+12, "4,16,wide": 4.56e+12, "4,20,wide": 4.36e+12, "4,24,wide": 4.05e+12,
    "4,28,wide": 4.04e+12, "4,32,wide": 3.89e+12, "8,4,wide": 4.86e+12, "8,8,wide": 3.82e+12,
    "8,12,wide": 3.59e+12, "8,16,wide": 3.46e+12, "8,20,wide": 3.44e+12, "8,24,wide": 3.31e+12,
    "8,28,wide": 3.32e+12, "8,32,wide": 3.24e+12, "16,4,wide": 3.29e+12, "16,8,wide": 2.89e+12,
    "16,12,wide": 2.89e+12, "16,16,wide": 2.9e+12, "16,20,wide": 2.95e+12,
    "16,24,wide": 2.92e+12, "16,28,wide": 2.95e+12, "16,32,wide": 2.94e+12,
    "32,4,wide": 2.46e+12, "32,8,wide": 2.41e+12, "32,12,wide": 2.53e+12,
    "32,16,wide": 2.6e+12,
}
#: one group alone, its first pass, lane-cells/s per shape "G,R"
SINGLE = {
    "4,4": 7.54e+08, "4,8": 6.74e+08, "4,12": 7.23e+08, "4,16": 7.19e+08, "4,20": 7.64e+08,
    "4,24": 7.28e+08, "4,28": 7.43e+08, "4,32": 7.21e+08, "8,4": 8.51e+08, "8,8": 8.87e+08,
    "8,12": 1.03e+09, "8,16": 1.08e+09, "8,20": 1.19e+09, "8,24": 1.17e+09, "8,28": 1.24e+09,
    "8,32": 1.21e+09, "16,4": 1.19e+09, "16,8": 1.34e+09, "16,12": 1.65e+09, "16,16": 1.78e+09,
    "16,20": 2.04e+09, "16,24": 2.04e+09, "16,28": 2.2e+09, "16,32": 2.17e+09,
    "32,4": 1.87e+09, "32,8": 2.33e+09, "32,12": 3.01e+09, "32,16": 3.31e+09,
}
#: a later pass of a group alone, in first passes, per G
LATER = {"4": 1.095, "8": 1.073, "16": 1.084, "32": 1.108}
#: seconds per launch, per profile, per profile word, per subject
LAUNCH, UNIT, PROFILE, SUBJECT = 0.000623, 1.13e-05, 1.08e-08, 1.55e-08
