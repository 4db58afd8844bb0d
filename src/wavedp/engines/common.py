"""Constants shared by every engine: mode codes, the -inf sentinel, the value range."""

LOCAL = 0
GLOBAL = 1
SEMIGLOBAL = 2

MODES = {"local": LOCAL, "global": GLOBAL, "semiglobal": SEMIGLOBAL}
MODE_NAMES = {v: k for k, v in MODES.items()}

#: "minus infinity" for E and F on the boundaries; subtracting a penalty cannot underflow int32.
NEG = -(1 << 30)
#: every real score (any cell of H, E, F) must stay strictly inside +-SCORE_LIMIT.
SCORE_LIMIT = 1 << 29

# Traceback direction byte, one per cell (CPU and GPU engines share the encoding).
#   bits 0-1: source of H: 0 = local zero (stop), 1 = diagonal, 2 = E, 3 = F
#   bit 2: E[i][j] == H[i][j-1] - open  (E opens here: leave state E)
#   bit 3: F[i][j] == H[i-1][j] - open  (F opens here: leave state F)
DIR_ZERO, DIR_DIAG, DIR_E, DIR_F = 0, 1, 2, 3
E_OPEN = 4
F_OPEN = 8
