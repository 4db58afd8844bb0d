"""Search statistics: the formulas, the table lookups, and NCBI BLAST as the oracle.

BLAST is driven with ``-comp_based_stats 0 -seg no -searchsp m*n`` (blastn with ``-dust no``),
so its E-value is ``K*m*n*exp(-lambda*S)`` and its bit score ``(lambda*S - ln K)/ln 2`` with the
table's lambda and K, computed here from BLAST's own raw score and compared at the precision
BLAST prints.
"""

from __future__ import annotations

import math
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import write_fasta

import wavedp
from wavedp.stats.karlin_altschul import (
    DNA_TABLES,
    PROTEIN_TABLES,
    KarlinAltschul,
    describe,
    parameters,
    require,
)

#: the shared data folder beside the checkout (CI clones main with shared/ beside it)
QUERIES = Path(__file__).resolve().parents[2] / "shared" / "data" / "allqueries.fasta"
NCBI_MATRICES = Path("/usr/share/ncbi/data")  # Debian's ncbi-data, installed with ncbi-blast+
AMINO = "ARNDCQEGHILKMFPSTWYV"
BLAST_TOOLS = ("blastp", "blastn", "makeblastdb")
MISSING = [tool for tool in BLAST_TOOLS if shutil.which(tool) is None]
needs_blast = pytest.mark.skipif(
    bool(MISSING), reason=f"NCBI BLAST+ is not installed ({', '.join(MISSING)} missing; "
    "apt-get install ncbi-blast+)")
needs_queries = pytest.mark.skipif(not QUERIES.exists(), reason=f"{QUERIES} is absent")


def protein(matrix: str, blast_open: int, blast_extend: int) -> wavedp.Scoring:
    """A wavedp scoring from BLAST's gap costs (BLAST's a/b is wavedp's (a+b)/b)."""
    return wavedp.Scoring(matrix=matrix, gap_open=blast_open + blast_extend,
                          gap_extend=blast_extend)


def dna(reward: int, penalty: int, blast_open: int, blast_extend: int) -> wavedp.Scoring:
    return wavedp.Scoring(match=reward, mismatch=penalty, gap_open=blast_open + blast_extend,
                          gap_extend=blast_extend)


# ---- formulas ---------------------------------------------------------------------------------

def test_bitscore_and_evalue_formulas():
    ka = KarlinAltschul(lambda_=0.267, K=0.041, H=0.14)
    # (0.267*462 - ln 0.041) / ln 2 and 0.041*144*10039*exp(-0.267*462), worked by hand;
    # blastp prints 182 (truncated) and 1.59e-49 for this score and search space
    assert ka.bitscore(462) == pytest.approx(182.5704, abs=1e-4)
    assert ka.evalue(462, 144, 10039) == pytest.approx(1.5879e-49, rel=1e-4)
    assert ka.evalue(0, 100, 1000) == pytest.approx(0.041 * 100 * 1000)
    assert ka.bitscore(0) == pytest.approx(-math.log2(0.041))


def test_evalue_is_search_space_times_two_to_the_minus_bitscore():
    ka = parameters(protein("BLOSUM62", 11, 1))
    for score in (0, 17, 50, 333):
        expected = 350 * 12345 * 2.0 ** -ka.bitscore(score)
        assert ka.evalue(score, 350, 12345) == pytest.approx(expected, rel=1e-12)


def test_round_down_pairs_use_the_even_score_for_evalue_only():
    ka = parameters(dna(2, -3, 5, 2))
    assert ka.round_down
    assert ka.evalue(459, 400, 900) == ka.evalue(458, 400, 900)
    assert ka.evalue(460, 400, 900) < ka.evalue(459, 400, 900)
    assert ka.bitscore(459) > ka.bitscore(458)
    plain = parameters(dna(1, -2, 2, 2))
    assert not plain.round_down
    assert plain.evalue(201, 400, 900) < plain.evalue(200, 400, 900)


# ---- lookups ----------------------------------------------------------------------------------

def test_blosum62_at_blast_default_gap_costs():
    assert parameters(protein("BLOSUM62", 11, 1)) == KarlinAltschul(0.267, 0.041, 0.14)
    lower = wavedp.Scoring(matrix="blosum62", gap_open=12, gap_extend=1)
    assert parameters(lower) == KarlinAltschul(0.267, 0.041, 0.14)
    assert parameters(protein("PAM30", 9, 1)) == KarlinAltschul(0.294, 0.11, 0.61)


@pytest.mark.parametrize("matrix", sorted(PROTEIN_TABLES))
def test_every_protein_row_is_found_under_wavedp_gap_costs(matrix):
    for (a, b), (lam, k, h) in PROTEIN_TABLES[matrix].items():
        # wavedp's BLOSUM80 (Biopython's) is not NCBI's: see test_statistics_only_for_ncbi_scores
        expected = None if matrix == "BLOSUM80" else KarlinAltschul(lam, k, h)
        assert parameters(protein(matrix, a, b)) == expected


def test_dna_pairs_and_their_multiples():
    assert parameters(dna(1, -2, 2, 2)) == KarlinAltschul(1.33, 0.62, 1.1)
    assert parameters(dna(2, -3, 5, 2)) == KarlinAltschul(0.625, 0.41, 0.78, round_down=True)
    # BLAST divides the pair by its gcd, scales the table's gap costs up and lambda down
    assert parameters(dna(4, -6, 10, 4)) == KarlinAltschul(0.3125, 0.41, 0.78, round_down=True)
    assert parameters(dna(2, -4, 4, 4)) == KarlinAltschul(0.665, 0.62, 1.1)
    assert parameters(dna(3, -9, 6, 6)) == KarlinAltschul(1.37 / 3, 0.70, 1.2)
    assert parameters(dna(4, -6, 5, 2)) is None  # 2/-3's row, but not scaled to 4/-6


def test_rows_that_do_not_exist():
    assert parameters(protein("BLOSUM62", 2, 1)) is None  # no table row
    assert parameters(wavedp.Scoring(matrix="LEVIN", gap_open=12, gap_extend=1)) is None
    assert parameters(dna(1, -2, 0, 0)) is None  # BLAST's linear (megablast) row
    assert parameters(dna(2, -3, 50, 10)) is None  # blastn would fall back to ungapped values
    assert parameters(dna(5, -1, 5, 2)) is None  # no table for the pair
    assert parameters(dna(1, 1, 5, 2)) is None  # a positive mismatch
    assert parameters(dna(0, -1, 5, 2)) is None


def test_describe():
    assert describe(protein("BLOSUM62", 11, 1)) == "BLOSUM62, gap open 12, extend 1"
    assert describe(dna(2, -3, 5, 2)) == "match 2, mismatch -3, gap open 7, extend 2"


def test_require_returns_the_parameters_in_local_mode():
    scoring = protein("BLOSUM62", 11, 1)
    assert require(scoring, "local") == parameters(scoring)


def test_require_names_the_known_gap_costs():
    with pytest.raises(wavedp.InputError) as err:
        require(wavedp.Scoring(matrix="BLOSUM62", gap_open=3, gap_extend=1), "local")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(
        "no E-value statistics for BLOSUM62, gap open 3, extend 1 (local mode)")
    assert "12/1" in message and "13/2" in message and "9/1" not in message


def test_require_for_dna_and_unknown_pairs():
    with pytest.raises(wavedp.InputError, match=r"match 2/mismatch -3 are .*7/2"):
        require(dna(2, -3, 1, 1), "local")
    with pytest.raises(wavedp.InputError, match=r"match/mismatch 1/-5, .* multiples"):
        require(dna(5, -1, 5, 2), "local")
    with pytest.raises(wavedp.InputError, match=r"LEVIN.*tables exist for BLOSUM45"):
        require(wavedp.Scoring(matrix="LEVIN", gap_open=12, gap_extend=1), "local")


@pytest.mark.parametrize("mode", ["global", "semiglobal"])
def test_require_refuses_global_and_semiglobal(mode):
    with pytest.raises(wavedp.InputError, match=f"in {mode} mode .*local alignment only"):
        require(protein("BLOSUM62", 11, 1), mode)


# ---- BLAST as the oracle ----------------------------------------------------------------------

def half_unit(text: str) -> float:
    """Half a unit in the last digit BLAST printed (``"1.59e-49"`` -> 0.005e-49)."""
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 0.5 * 10.0 ** (int(exponent or 0) - decimals)


def assert_evalue_as_printed(ours: float, text: str) -> None:
    """BLAST rounds the E-value to its printed digits and prints 0.0 below 1e-180."""
    if text == "0.0":
        assert ours < 1e-180, (ours, text)
    else:
        assert abs(ours - float(text)) <= half_unit(text) * (1 + 1e-9), (ours, text)


def assert_bitscore_as_printed(ours: float, text: str) -> None:
    """BLAST prints one decimal below 100 and truncates to an integer above."""
    if "." in text or "e" in text:
        assert abs(ours - float(text)) <= half_unit(text) * (1 + 1e-9), (ours, text)
    else:
        assert int(text) - 1e-9 <= ours < int(text) + 1, (ours, text)


def test_printed_precision_helpers():
    assert_evalue_as_printed(1.5879e-49, "1.59e-49")
    assert_evalue_as_printed(0.01902, "0.019")
    assert_evalue_as_printed(25.71, "26")
    assert_evalue_as_printed(3e-200, "0.0")
    assert_bitscore_as_printed(182.57, "182")
    assert_bitscore_as_printed(70.4774, "70.5")
    for ours, text in ((1.60e-49, "1.59e-49"), (0.0196, "0.019"), (1e-170, "0.0")):
        with pytest.raises(AssertionError):
            assert_evalue_as_printed(ours, text)
    with pytest.raises(AssertionError):
        assert_bitscore_as_printed(183.01, "182")


def run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def blast_lines(out: str) -> list[tuple[str, str, int, str, str]]:
    """Rows of ``-outfmt "6 qseqid sseqid score evalue bitscore"``."""
    rows = []
    for line in out.splitlines():
        qid, sid, score, evalue, bits = line.split("\t")
        rows.append((qid, sid, int(score), evalue, bits))
    return rows


def printed_gapped_parameters(report: str) -> tuple[float, float, float]:
    """lambda, K and H from the "Gapped" block of BLAST's pairwise report."""
    found = re.search(r"Gapped\nLambda\s+K\s+H[^\n]*\n\s*(\S+)\s+(\S+)\s+(\S+)", report)
    assert found, report
    return tuple(float(value) for value in found.groups())


def mutate(seq: str, rate: float, letters: str, rng: random.Random) -> str:
    """Substitute at ``rate``, delete and insert one residue at rate/10 each."""
    out = []
    for residue in seq:
        x = rng.random()
        if x < rate:
            out.append(rng.choice(letters))
        elif x < rate * 1.1:
            continue
        elif x < rate * 1.2:
            out.append(residue + rng.choice(letters))
        else:
            out.append(residue)
    return "".join(out)


@needs_blast
@pytest.mark.parametrize("matrix", sorted(PROTEIN_TABLES))
def test_protein_tables_equal_what_blastp_prints(matrix, tmp_path):
    query = write_fasta(tmp_path / "q.fa", {"q": "MGFTEKQEALVNSSSQLFKQNPSNYSVLFYTIILQKAPTAK"})
    for (a, b), row in PROTEIN_TABLES[matrix].items():
        report = run("blastp", "-query", str(query), "-subject", str(query), "-matrix", matrix,
                     "-gapopen", str(a), "-gapextend", str(b), "-comp_based_stats", "0",
                     "-seg", "no")
        assert printed_gapped_parameters(report) == row, (matrix, a, b)


@pytest.mark.skipif(not NCBI_MATRICES.is_dir(), reason=f"{NCBI_MATRICES} is absent")
@pytest.mark.parametrize("matrix", sorted(PROTEIN_TABLES))
def test_statistics_only_for_ncbi_scores(matrix):
    """The tables hold for NCBI's matrices: wavedp's (Biopython's) matrix of the same name gets
    them exactly when its scores over the 20 amino acids are NCBI's."""
    from Bio.Align import substitution_matrices

    ncbi = substitution_matrices.read(str(NCBI_MATRICES / matrix))
    scoring = protein(matrix, *next(iter(PROTEIN_TABLES[matrix])))
    ours = {(a, b): int(scoring.table[scoring.alphabet.index(a), scoring.alphabet.index(b)])
            for a in AMINO for b in AMINO}
    same = all(ours[a, b] == ncbi[a, b] for a in AMINO for b in AMINO)
    assert same == (parameters(scoring) is not None)
    assert same == (matrix != "BLOSUM80")  # Biopython's BLOSUM80 is in 1/3-bit units


def test_biopython_blosum80_gets_no_statistics():
    scoring = protein("BLOSUM80", 10, 1)
    assert parameters(scoring) is None
    with pytest.raises(wavedp.InputError, match="tables are for NCBI's BLOSUM80"):
        require(scoring, "local")


@needs_blast
@pytest.mark.parametrize("pair", sorted(DNA_TABLES))
def test_dna_tables_and_multiples_equal_what_blastn_prints(pair, tmp_path):
    rng = random.Random(5)
    query = write_fasta(tmp_path / "q.fa", {"q": "".join(rng.choice("ACGT") for _ in range(80))})
    for times in (1, 2):
        reward, penalty = pair[0] * times, pair[1] * times
        for a, b in DNA_TABLES[pair]:
            a, b = a * times, b * times
            report = run("blastn", "-task", "blastn", "-query", str(query), "-subject",
                         str(query), "-reward", str(reward), "-penalty", str(penalty),
                         "-gapopen", str(a), "-gapextend", str(b), "-dust", "no")
            ka = parameters(dna(reward, penalty, a, b))
            printed = tuple(float(f"{value:.3g}") for value in (ka.lambda_, ka.K, ka.H))
            assert printed_gapped_parameters(report) == printed, (reward, penalty, a, b)


@needs_blast
@pytest.mark.parametrize(("matrix", "gaps"), [
    ("BLOSUM62", (14, 1)),
    ("BLOSUM62", (5, 2)),
    ("BLOSUM45", (20, 1)),
])
def test_blastp_refuses_what_has_no_row(matrix, gaps, tmp_path):
    """No table row here means BLAST has none either: blastp stops with an error."""
    assert parameters(protein(matrix, *gaps)) is None
    query = write_fasta(tmp_path / "q.fa", {"q": "MGFTEKQEALVNSSSQLFKQNPSNYSV"})
    done = subprocess.run(["blastp", "-query", str(query), "-subject", str(query), "-matrix",
                           matrix, "-gapopen", str(gaps[0]), "-gapextend", str(gaps[1])],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "not supported" in done.stderr


@pytest.fixture(scope="module")
def protein_search(tmp_path_factory):
    """Three queries from allqueries.fasta and a small BLAST database of mutated copies of
    them and of five other proteins (close, distant and unrelated hits)."""
    from Bio import SeqIO

    seqs = {rec.id: str(rec.seq) for rec in SeqIO.parse(QUERIES, "fasta")}
    ids = list(seqs)[:8]
    rng = random.Random(11)
    database = {f"s{k}_{rate}": mutate(seqs[name], rate, AMINO, rng)
                for k, name in enumerate(ids) for rate in (0.15, 0.5, 0.7)}
    folder = tmp_path_factory.mktemp("blastp")
    fasta = write_fasta(folder / "db.fa", database)
    run("makeblastdb", "-in", str(fasta), "-dbtype", "prot", "-out", str(folder / "db"))
    queries = {f"q{k}": seqs[ids[k]] for k in (0, 3, 7)}
    for name, seq in queries.items():
        write_fasta(folder / f"{name}.fa", {name: seq})
    return folder, queries, database


@needs_blast
@needs_queries
@pytest.mark.parametrize(("matrix", "gaps"), [
    ("BLOSUM62", (11, 1)),  # BLAST's default: wavedp 12/1
    ("BLOSUM62", (9, 2)),
    ("BLOSUM45", (15, 2)),
    ("BLOSUM50", (13, 2)),
    ("BLOSUM90", (10, 1)),
    ("PAM30", (9, 1)),
    ("PAM70", (10, 1)),
    ("PAM250", (14, 2)),
])
def test_blastp_evalues_and_bitscores(matrix, gaps, protein_search):
    folder, queries, database = protein_search
    scoring = protein(matrix, *gaps)
    ka = require(scoring, "local")
    n = sum(len(seq) for seq in database.values())
    lines = 0
    for name, seq in queries.items():
        m = len(seq)
        out = run("blastp", "-query", str(folder / f"{name}.fa"), "-db", str(folder / "db"),
                  "-matrix", matrix, "-gapopen", str(gaps[0]), "-gapextend", str(gaps[1]),
                  "-comp_based_stats", "0", "-seg", "no", "-searchsp", str(m * n),
                  "-evalue", "1000",
                  "-outfmt", "6 qseqid sseqid score evalue bitscore")
        rows = blast_lines(out)
        for _, _, score, evalue, bits in rows:
            assert_evalue_as_printed(ka.evalue(score, m, n), evalue)
            assert_bitscore_as_printed(ka.bitscore(score), bits)
        # the first row for the close homolog is its best HSP: BLAST's raw score is the
        # Smith-Waterman score under the same scoring
        close = f"s{name[1:]}_0.15"
        best = next(score for _, sid, score, _, _ in rows if sid == close)
        assert best == wavedp.align(seq, database[close], scoring, mode="local",
                                    device="cpu").score
        lines += len(rows)
    assert lines > 20


@needs_blast
@pytest.mark.parametrize("costs", [
    (2, -3, 5, 2),  # blastn's default: wavedp match 2, mismatch -3, gap 7/2
    (1, -2, 2, 2),
    (4, -6, 8, 4),  # 2/-3 scaled by two
    (1, -1, 3, 2),
    (3, -4, 5, 2),
])
def test_blastn_evalues_and_bitscores(costs, tmp_path):
    reward, penalty, a, b = costs
    scoring = dna(*costs)
    ka = require(scoring, "local")
    rng = random.Random(23)

    def noise(k: int) -> str:
        return "".join(rng.choice("ACGT") for _ in range(k))

    query = noise(400)
    database = {"close": noise(150) + mutate(query, 0.12, "ACGT", rng) + noise(200)}
    for k, rate in enumerate((0.2, 0.25, 0.3, 0.35)):
        database[f"far{rate}"] = noise(50) + mutate(query[k * 50:k * 50 + 200], rate, "ACGT",
                                                     rng) + noise(50)
    database["none"] = noise(900)
    qfile = write_fasta(tmp_path / "q.fa", {"q": query})
    fasta = write_fasta(tmp_path / "db.fa", database)
    run("makeblastdb", "-in", str(fasta), "-dbtype", "nucl", "-out", str(tmp_path / "db"))
    m, n = len(query), sum(len(seq) for seq in database.values())
    out = run("blastn", "-task", "blastn", "-query", str(qfile), "-db", str(tmp_path / "db"),
              "-reward", str(reward), "-penalty", str(penalty), "-gapopen", str(a),
              "-gapextend", str(b), "-dust", "no", "-strand", "plus", "-searchsp", str(m * n),
              "-word_size", "7", "-evalue", "1000",
              "-outfmt", "6 qseqid sseqid score evalue bitscore")
    rows = blast_lines(out)
    assert len(rows) > 5
    for _, _, score, evalue, bits in rows:
        assert_evalue_as_printed(ka.evalue(score, m, n), evalue)
        assert_bitscore_as_printed(ka.bitscore(score), bits)
    if ka.round_down and math.gcd(reward, penalty, a, b) % 2:
        # odd raw scores occur, so BLAST's even-score rule was exercised above
        assert any(score % 2 for _, _, score, _, _ in rows)
    best = next(score for _, sid, score, _, _ in rows if sid == "close")
    assert best == wavedp.align(query, database["close"], scoring, mode="local",
                                device="cpu").score
