"""Non-serial polyadic DP: ``m[i][j] = opt_k m[i][k] + m[k+1][j] + w``, blocked, on the CPU
(Numba) and the GPU (CUDA), with matrix-chain ordering and Nussinov RNA folding on top."""

from .api import Solution, solve
from .chain import matrix_chain
from .nussinov import nussinov
from .problem import Pairs
from .traceback import derivation, dotbracket, pairs, parenthesization

__all__ = ["Pairs", "Solution", "derivation", "dotbracket", "matrix_chain", "nussinov",
           "pairs", "parenthesization", "solve"]
