"""Profiles (``wavedp.Profile``): PSI-BLAST's ASCII PSSM read and written byte for byte, bad
files refused with one line, and a profile scored exactly by the engines (the reference's
recurrence with the profile's own scores)."""

import dataclasses
import shutil
import subprocess

import numpy as np
import pytest

import wavedp
from wavedp import engines
from wavedp.device import Device
from wavedp.engines import reference
from wavedp.engines.common import MODES
from wavedp.errors import InputError
from wavedp.profiles import LETTERS, Profile, parse

BLOSUM62 = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


def _family(tmp_path, seed: int = 3, length: int = 90):
    """A query, 40 relatives (30% substituted) and 200 unrelated proteins as FASTA files."""
    rng = np.random.default_rng(seed)
    letters = np.array(list(LETTERS))
    query = "".join(rng.choice(letters, length))
    records = []
    for k in range(40):
        s = np.array(list(query))
        change = rng.random(s.size) < 0.3
        s[change] = rng.choice(letters, int(change.sum()))
        records.append(f">rel{k}\n{''.join(s)}")
    records += [f">other{k}\n{''.join(rng.choice(letters, 120))}" for k in range(200)]
    (tmp_path / "q.fa").write_text(f">query\n{query}\n")
    (tmp_path / "db.fa").write_text("\n".join(records) + "\n")
    return query


@pytest.mark.skipif(shutil.which("psiblast") is None, reason="needs psiblast (ncbi-blast+)")
@pytest.mark.parametrize("iterations", [2, 3])
def test_a_psiblast_pssm_reads_and_writes_back_unchanged(tmp_path, iterations):
    query = _family(tmp_path)
    subprocess.run(["makeblastdb", "-in", "db.fa", "-dbtype", "prot", "-out", "db"],
                   cwd=tmp_path, check=True, capture_output=True)
    subprocess.run(["psiblast", "-query", "q.fa", "-db", "db", "-num_iterations",
                    str(iterations), "-out_ascii_pssm", "q.pssm", "-out", "q.txt"],
                   cwd=tmp_path, check=True, capture_output=True)
    text = (tmp_path / "q.pssm").read_text()
    profile = Profile.read(tmp_path / "q.pssm")
    assert profile.query == query and profile.scores.shape == (len(query), 20)
    assert profile.text() == text
    profile.write(tmp_path / "again.pssm")
    assert (tmp_path / "again.pssm").read_bytes() == (tmp_path / "q.pssm").read_bytes()


def test_a_profile_of_the_matrix_aligns_as_the_matrix():
    rng = np.random.default_rng(5)
    for _ in range(20):
        q = "".join(rng.choice(list(LETTERS), int(rng.integers(1, 80))))
        t = "".join(rng.choice(list(LETTERS + "XBZ"), int(rng.integers(1, 90))))
        profile = Profile.from_matrix(q, BLOSUM62, id="query1")
        for mode in MODES:
            for traceback in (True, False):
                plain = wavedp.align(q, t, BLOSUM62, mode=mode, traceback=traceback,
                                     device="cpu")
                assert wavedp.align(profile, t, BLOSUM62, mode=mode,
                                    traceback=traceback) == plain


def test_random_profiles_align_as_the_reference():
    """Extreme scores and shapes: the CPU engines with the profile's table (rows: the
    query's positions) equal the reference's recurrence, end cell and path."""
    rng = np.random.default_rng(7)
    for trial in range(84):
        m, n = int(rng.integers(1, 60)), int(rng.integers(1, 70))
        if trial >= 80:  # positions past a byte's codes
            m = int(rng.integers(257, 400))
        top = [5, 30, 1000][trial % 3]
        scores = rng.integers(-top, top + 1, (m, 20))
        profile = Profile("".join(rng.choice(list(LETTERS), m)), scores)
        table = profile.table(BLOSUM62)
        t = rng.integers(0, len(BLOSUM62.alphabet), n).astype(np.uint8)
        for mode, code in MODES.items():
            for traceback in (True, False):
                raw = engines.align_pairs(Device("cpu"), [profile.codes()], [t],
                                          np.zeros((1, 2), np.int64), table, 11, 1, code,
                                          traceback=traceback)[0]
                ref = reference.align(list(range(m)), t.tolist(), table, 11, 1, code,
                                      traceback)
                if traceback:
                    assert raw[:5] == ref[:5], (mode, trial)
                    assert bytes(raw[5]).decode().replace("=", "M").replace("X", "M") == \
                        ref[5].replace("=", "M").replace("X", "M")
                else:
                    assert (raw[0], raw[2], raw[4]) == (ref[0], ref[2], ref[4]), (mode, trial)


def test_a_profile_scores_each_position_its_own_way():
    """Position 2 of ``AAA`` rewards W alone: the alignment to ``AWA`` takes it."""
    scores = np.full((3, 20), -5)
    scores[:, LETTERS.index("A")] = 4
    scores[1, LETTERS.index("W")] = 9
    found = wavedp.align(Profile("AAA", scores), "AWA", BLOSUM62)
    assert (found.score, found.cigar) == (17, "1=1X1=")


def test_the_table_keeps_the_matrix_for_letters_a_profile_lacks():
    profile = Profile("AW", np.zeros((2, 20), int))
    table = profile.table(BLOSUM62)
    x = BLOSUM62.alphabet.index("X")
    a, w = BLOSUM62.alphabet.index("A"), BLOSUM62.alphabet.index("W")
    assert table.shape == (2, len(BLOSUM62.alphabet))
    assert table[0, x] == BLOSUM62.table[a, x] and table[1, x] == BLOSUM62.table[w, x]
    assert not table[:, [BLOSUM62.alphabet.index(c) for c in LETTERS]].any()


GOOD = (
    "\nLast position-specific scoring matrix computed\n"
    "            A   R   N   D   C   Q   E   G   H   I   L   K   M   F   P   S   T   W   Y   V\n"
    "    1 M    -1  -2  -3  -4  -2  -1  -2  -3  -2   1   2  -2   6   0  -3  -2  -1  -2  -1   1\n"
    "    2 K    -1   2   0  -1  -4   1   1  -2  -1  -3  -3   5  -2  -4  -1   0  -1  -3  -2  -3\n"
)


def test_a_file_without_percentages_reads_and_writes_back():
    profile = parse(GOOD, "p.pssm")
    assert profile.query == "MK" and profile.percent is None
    assert profile.text() == GOOD


@pytest.mark.parametrize("text, message", [
    ("hello\n", "p.pssm: not an ASCII PSSM"),
    (GOOD.replace("   R   N", "   N   R"), "p.pssm, line 3: the column letters are in another "
     "order"),
    (GOOD.replace("   V\n", "\n", 1), "p.pssm, line 3: the column letters lack V"),
    (GOOD.replace("   1\n", "\n", 1), "p.pssm, line 4: 19 values after the position and "
     "letter, expected 20"),
    (GOOD.replace("  -4   1", " 0.5   1"), "p.pssm, line 5: '0.5' is not an integer"),
    (GOOD.replace("    2 K", "    3 K"), "p.pssm, line 5: position '3', expected 2"),
    (GOOD.replace("    2 K", "    2 7"), "p.pssm, line 5: '7' is not a residue letter"),
    (GOOD.split("    1 M")[0], "p.pssm, line 4: no positions below the letters"),
])
def test_a_bad_pssm_is_one_line(text, message):
    with pytest.raises(InputError) as caught:
        parse(text, "p.pssm")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_profile_made_in_python_is_checked():
    with pytest.raises(InputError, match="3 positions for a query of 2 letters"):
        Profile("AW", np.zeros((3, 20), int))
    with pytest.raises(InputError, match="scores must be m x 20"):
        Profile("AW", np.zeros((2, 19), int))
    with pytest.raises(InputError, match="scores must be integers"):
        Profile("AW", np.full((2, 20), 0.5))


def test_a_profile_is_written_whole(tmp_path):
    profile = parse(GOOD, "p.pssm")
    out = tmp_path / "out.pssm"
    profile.write(out)
    assert out.read_text() == GOOD and [p.name for p in tmp_path.iterdir()] == ["out.pssm"]
    assert dataclasses.replace(profile, id="x").text() == GOOD


def test_the_cpu_scan_scores_profiles_as_the_reference():
    """The database scan's inter-sequence kernel (every width) with a profile's table."""
    from wavedp.engines.cpu.intersequence import scores_many

    rng = np.random.default_rng(2)
    subjects = [rng.integers(0, 24, int(rng.integers(1, 60))).astype(np.uint8)
                for _ in range(70)]
    residues = np.concatenate(subjects)
    offsets = np.concatenate([[0], np.cumsum([s.size for s in subjects])]).astype(np.int64)
    for m, top in ((int(rng.integers(1, 50)), 5), (int(rng.integers(1, 50)), 30), (300, 200)):
        profile = Profile("".join(rng.choice(list(LETTERS), m)),
                          rng.integers(-top, top + 1, (m, 20)))
        table = profile.table(BLOSUM62)  # 300 rows: query codes past a byte
        for code in MODES.values():
            want = [reference.align(list(range(m)), s.tolist(), table, 11, 1, code, False)[0]
                    for s in subjects]
            for width in (8, 16, 32):
                got = scores_many([profile.codes()], residues, offsets, table, 11, 1, code,
                                  width)[0]
                assert got.tolist() == want, (top, code, width)


def _database(rng, query: str, count: int = 120):
    """Relatives of ``query`` (25% substituted) among unrelated proteins."""
    letters = np.array(list(LETTERS))
    texts = []
    for k in range(count):
        if k % 4 == 0:
            s = np.array(list(query))
            change = rng.random(s.size) < 0.25
            s[change] = rng.choice(letters, int(change.sum()))
            texts.append("".join(s[: int(rng.integers(s.size // 2, s.size + 1))]))
        else:
            texts.append("".join(rng.choice(letters, int(rng.integers(5, 300)))))
    return texts


def _key(hits):
    return [(h.target_id, h.score, h.query_start, h.query_end, h.target_start, h.target_end,
             h.cigar) for h in hits]


def test_a_search_with_the_matrix_profile_equals_the_plain_search():
    rng = np.random.default_rng(21)
    query = "".join(rng.choice(list(LETTERS), 140))
    texts = _database(rng, query)
    plain = wavedp.search([query], texts, BLOSUM62, device="cpu", top=0, evalue=None,
                          stats="none")
    profile = wavedp.search(Profile.from_matrix(query, BLOSUM62), texts, BLOSUM62,
                            device="cpu", top=0, evalue=None, stats="none")
    assert _key(profile[0]) == _key(plain[0]) and len(plain[0]) > 10


def test_profiles_searched_together_each_as_alone_and_as_align():
    """Three profiles in one search (their tables one after another, one past 256
    positions): each one's hits are its search alone, and each hit is wavedp.align of the
    profile with its subject."""
    rng = np.random.default_rng(22)
    queries = ["".join(rng.choice(list(LETTERS), m)) for m in (60, 300, 25)]
    texts = _database(rng, queries[1], 240)
    profiles = [Profile(q, rng.integers(-6, 9, (len(q), 20)), id=f"p{k}")
                for k, q in enumerate(queries)]
    together = wavedp.search(profiles, texts, BLOSUM62, device="cpu", top=6)
    assert [h.query_id for h in together[1]] == ["p1"] * 6
    for profile, hits in zip(profiles, together, strict=True):
        alone = wavedp.search(profile, texts, BLOSUM62, device="cpu", top=6)[0]
        assert _key(hits) == _key(alone)
        assert [h.evalue for h in hits] == [h.evalue for h in alone]
        assert all(h.evalue is not None for h in hits)
        for hit in hits:
            pair = wavedp.align(profile, texts[int(hit.target_id[6:]) - 1], BLOSUM62)
            assert (pair.score, pair.cigar, pair.query_start, pair.target_start) == \
                (hit.score, hit.cigar, hit.query_start, hit.target_start)


@pytest.mark.parametrize("options, message", [
    ({"stats": "blast"}, "stats 'blast' takes the matrix's own tables"),
    ({"stats": "composition"}, "stats 'composition' takes the matrix's own tables"),
    ({"mask": True}, "mask does not apply to a profile's search"),
    ({"fraction": 0.5}, "fraction does not apply to a profile's search"),
])
def test_a_profile_search_refuses_what_does_not_apply(options, message):
    profile = Profile("MKV", np.zeros((3, 20), int))
    with pytest.raises(InputError, match=message):
        wavedp.search(profile, ["MKVL"], BLOSUM62, device="cpu", **options)
    with pytest.raises(InputError, match="profiles or sequences, not both"):
        wavedp.search([profile, "MKV"], ["MKVL"], BLOSUM62, device="cpu")


def test_search_in_pssm_writes_the_profile_search(tmp_path):
    """``wavedp search --in-pssm FILE DB``: the lines of wavedp.search with the profile;
    a PSSM with QUERIES too, a FASTA file as the PSSM, or BLAST's tables: one line, exit 2,
    nothing written."""
    from click.testing import CliRunner

    from wavedp.cli import cli
    from wavedp.dbsearch import text

    rng = np.random.default_rng(24)
    query = "".join(rng.choice(list(LETTERS), 90))
    texts = _database(rng, query, 240)
    (tmp_path / "db.fa").write_text("".join(f">s{k}\n{t}\n" for k, t in enumerate(texts)))
    profile = Profile(query, rng.integers(-6, 9, (90, 20)))
    profile.write(tmp_path / "q.pssm")
    (tmp_path / "q.fa").write_text(f">q\n{query}\n")
    runner = CliRunner()
    done = runner.invoke(cli, ["search", "--in-pssm", str(tmp_path / "q.pssm"),
                               str(tmp_path / "db.fa"), "--device", "cpu", "-o",
                               str(tmp_path / "out.tsv")])
    assert done.exit_code == 0, done.output
    hits = wavedp.search(Profile.read(tmp_path / "q.pssm"), str(tmp_path / "db.fa"),
                         BLOSUM62, device="cpu")[0]
    assert (tmp_path / "out.tsv").read_text() == text.render(hits, "blast6", None, BLOSUM62)
    assert hits and hits[0].query_id == "q.pssm"
    for argv, message in (
            (["--in-pssm", "q.pssm", "q.fa", "db.fa"], "takes DB alone"),
            (["--in-pssm", "q.fa", "db.fa"], "not an ASCII PSSM"),
            (["--in-pssm", "q.pssm", "db.fa", "--stats", "blast"], "matrix's own tables")):
        paths = [str(tmp_path / a) if a.endswith((".pssm", ".fa")) else a for a in argv]
        bad = runner.invoke(cli, ["search", *paths, "--device", "cpu", "-o",
                                  str(tmp_path / "bad.tsv")])
        assert bad.exit_code == 2 and message in bad.output, bad.output
        assert not (tmp_path / "bad.tsv").exists()


def _chain(seed: int = 5, relatives: int = 40, others: int = 600):
    """A query and a chain of relatives (each 12% substituted from the one before, so the
    later ones are remote from the query) among unrelated proteins."""
    rng = np.random.default_rng(seed)
    letters = list(LETTERS)
    query = "".join(rng.choice(letters, 120))
    texts, current = [], np.array(list(query))
    for _ in range(relatives):
        current = current.copy()
        change = rng.random(current.size) < 0.12
        current[change] = rng.choice(letters, int(change.sum()))
        texts.append("".join(current))
    texts += ["".join(rng.choice(letters, 150)) for _ in range(others)]
    return query, texts


def test_a_profile_built_from_no_hits_is_the_matrix():
    from wavedp.profiles.build import build

    query = "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVVHSLAKW"
    built = build(query, [], BLOSUM62, id="q")
    plain = Profile.from_matrix(query, BLOSUM62)
    off = np.abs(built.scores - plain.scores)
    assert off.max() <= 1 and np.count_nonzero(off) <= 0.01 * off.size  # the targets' rounding
    assert parse(built.text(), "b.pssm").text() == built.text()  # its ASCII extras read back


def test_the_query_anchored_columns_follow_the_cigar():
    from wavedp.profiles.build import columns, weights

    hit = wavedp.align("ACDEFGHIK", "CDXEFWWGHI", BLOSUM62, mode="global")
    rows = columns("ACDEFGHIK", [hit], BLOSUM62)
    text = "".join("-" if v == -1 else "." if v == -2 else LETTERS[v] for v in rows[1])
    top, bottom = hit.rows()  # the query's letters over the target's, gaps as "-"
    want = "".join(b if b in LETTERS else "-" for a, b in zip(top, bottom, strict=True)
                   if a != "-")
    assert "D" in hit.cigar and "I" in hit.cigar and text == want == "CD-EFGHI-"
    two = weights(np.array([rows[0], rows[0], rows[1]]))
    three = weights(np.array([rows[0], rows[0], rows[0], rows[1]]))
    assert two[0] == two[1] and three[3] / three[0] > two[2] / two[0]  # copies share


def test_iterations_reach_remote_relatives_and_stop_when_nothing_is_new(monkeypatch):
    query, texts = _chain()
    related = {f"target{k + 1}" for k in range(40)}
    found = {}
    for rounds in (1, 3, 6):
        hits = wavedp.search([query], texts, BLOSUM62, device="cpu", top=0, evalue=0.001,
                             iterations=rounds)[0]
        found[rounds] = {h.target_id for h in hits}
        assert found[rounds] <= related  # no unrelated subject at E <= 0.001
    assert len(found[1]) < len(found[3]) < len(found[6])
    searcher = wavedp.Searcher(texts, BLOSUM62, device="cpu")
    calls = []
    search = searcher.iter_search
    monkeypatch.setattr(searcher, "iter_search",
                        lambda *a, **k: calls.append(1) or search(*a, **k))
    profiles = []
    hits = list(searcher.iter_search([query], top=0, evalue=0.001, iterations=50,
                                     on_profile=lambda k, p: profiles.append(p)))[0][1]
    assert 3 <= len(calls) < 20 and {h.target_id for h in hits} <= related  # converged
    assert len(profiles) == 1 and profiles[0].query == query and profiles[0].id == "query1"


@pytest.mark.parametrize("options, message", [
    ({"iterations": 0}, "iterations must be a positive integer"),
    ({"iterations": 2, "inclusion_evalue": 0}, "inclusion_evalue must be a positive"),
    ({"iterations": 2, "traceback": False}, "not with score-only"),
    ({"iterations": 2, "stats": "none"}, "not with score-only or stats 'none'"),
    ({"iterations": 2, "stats": "blast"}, "stats 'blast' takes the matrix's own tables"),
])
def test_bad_iterations_are_one_line(options, message):
    with pytest.raises(InputError, match=message):
        wavedp.search(["MKVLA"], ["MKVLAW"], BLOSUM62, device="cpu", **options)
    with pytest.raises(InputError, match="a profile's search is one round"):
        wavedp.search(Profile("MKV", np.zeros((3, 20), int)), ["MKVLAW"], BLOSUM62,
                      device="cpu", iterations=2)


def test_search_iterations_writes_the_last_rounds_hits_and_profile(tmp_path):
    from click.testing import CliRunner

    from wavedp.cli import cli
    from wavedp.dbsearch import text

    query, texts = _chain(seed=6)
    (tmp_path / "db.fa").write_text("".join(f">s{k}\n{t}\n" for k, t in enumerate(texts)))
    (tmp_path / "q.fa").write_text(f">q\n{query}\n")
    (tmp_path / "two.fa").write_text(f">q\n{query}\n>r\n{texts[-1]}\n")
    runner = CliRunner()
    done = runner.invoke(cli, ["search", str(tmp_path / "q.fa"), str(tmp_path / "db.fa"),
                               "--iterations", "3", "--out-pssm", str(tmp_path / "q.pssm"),
                               "--device", "cpu", "-o", str(tmp_path / "out.tsv")])
    assert done.exit_code == 0, done.output
    searcher = wavedp.Searcher(str(tmp_path / "db.fa"), BLOSUM62, device="cpu")
    profiles = []
    hits = list(searcher.iter_search(str(tmp_path / "q.fa"), iterations=3,
                                     on_profile=lambda k, p: profiles.append(p)))[0][1]
    assert (tmp_path / "out.tsv").read_text() == text.render(hits, "blast6", None, BLOSUM62)
    assert (tmp_path / "q.pssm").read_text() == profiles[0].text()
    assert Profile.read(tmp_path / "q.pssm").scores.tolist() == profiles[0].scores.tolist()
    bad = runner.invoke(cli, ["search", str(tmp_path / "two.fa"), str(tmp_path / "db.fa"),
                              "--iterations", "2", "--out-pssm", str(tmp_path / "x.pssm"),
                              "--device", "cpu", "-o", str(tmp_path / "x.tsv")])
    assert bad.exit_code == 2 and "QUERIES holds 2" in bad.output
    assert not (tmp_path / "x.pssm").exists() and not (tmp_path / "x.tsv").exists()


def test_a_hit_is_rescored_under_rows_adjusted_to_the_subjects_composition():
    """Against a subject made of the letters a biased query's rows favour, the rescored
    score falls (a biased pair's score is partly its composition); an unbiased query
    against a subject of background composition keeps about its score."""
    from wavedp.stats.composition import ProfileComposition

    rng = np.random.default_rng(31)
    query = "".join(rng.choice(list("EKQR"), 80))  # a biased, coiled-coil-like query
    profile = Profile.from_matrix(query, BLOSUM62)
    comp = ProfileComposition.of_table(BLOSUM62, profile.table(BLOSUM62))
    subject = "".join(rng.choice(list("EKQR"), 90))
    hit = wavedp.align(profile, subject, BLOSUM62)
    codes = BLOSUM62.encode(subject)
    rows = profile.codes()
    biased = comp.frequencies(np.bincount(codes, minlength=comp.size))
    assert comp.rescored(hit.score, rows, hit, codes, biased) < hit.score - 20
    assert comp.ratios_of(rows, biased[None, :]).tolist() == [1.0]
    p = comp.background
    plain = "".join(np.array(list(BLOSUM62.alphabet[:20]))[rng.choice(20, 400, p=p)])
    profile = Profile.from_matrix(plain, BLOSUM62)
    comp = ProfileComposition.of_table(BLOSUM62, profile.table(BLOSUM62))
    hit = wavedp.align(profile, plain[:300], BLOSUM62)
    again = comp.rescored(hit.score, profile.codes(), hit, BLOSUM62.encode(plain[:300]), p)
    assert abs(again - hit.score) < 0.05 * hit.score


@pytest.mark.parametrize("fmt", ["a3m", "sto", "fasta"])
def test_the_msa_of_a_search_reads_back(tmp_path, fmt):
    """``search --msa``: the query and its hits, query-anchored: Biopython reads A3M as FASTA
    (its upper case and '-' the query's columns) and Stockholm; the aligned FASTA's rows have
    the query's length; hmmbuild takes the Stockholm (one match state a query position)."""
    from Bio import AlignIO, SeqIO
    from click.testing import CliRunner

    from wavedp.cli import cli

    query, texts = _chain(seed=8, relatives=12, others=220)
    texts[0] = texts[0][:60] + "WWWKKKWW" + texts[0][60:]  # an insertion
    texts[3] = texts[3][:90]  # a short end
    (tmp_path / "db.fa").write_text("".join(f">s{k} x\n{t}\n" for k, t in enumerate(texts)))
    (tmp_path / "q.fa").write_text(f">q\n{query}\n")
    out = tmp_path / f"out.{fmt}"
    done = CliRunner().invoke(cli, ["search", str(tmp_path / "q.fa"), str(tmp_path / "db.fa"),
                                    "--iterations", "2", "--msa", str(out), "--msa-format",
                                    fmt, "--device", "cpu", "-o", str(tmp_path / "h.tsv")])
    assert done.exit_code == 0, done.output
    hits = (tmp_path / "h.tsv").read_text().splitlines()
    if fmt == "sto":
        aligned = AlignIO.read(str(out), "stockholm")
        assert len(aligned) == len(hits) + 1 and aligned[0].id == f"q/1-{len(query)}"
        if shutil.which("hmmbuild"):
            report = subprocess.run(["hmmbuild", "--hand", str(tmp_path / "out.hmm"),
                                     str(out)], capture_output=True, text=True,
                                    check=True).stdout  # --hand: the RF line's columns
            assert f" {len(query)} " in report.split("\n# -")[-1]  # the model's length
        return
    records = list(SeqIO.parse(str(out), "fasta"))
    assert len(records) == len(hits) + 1 and str(records[0].seq) == query
    for record in records:
        columns = [c for c in str(record.seq) if not c.islower()]
        assert len(columns) == len(query)
    if fmt == "a3m":
        assert any(c.islower() for r in records for c in str(r.seq))  # the insertion


def test_a_profile_of_10000_positions_scans_and_aligns_alike():
    """A long profile (10,000 positions: codes far past a byte): the scan's scores equal
    the pairs' alignments' in every mode."""
    from wavedp.engines.cpu.intersequence import scores_many

    rng = np.random.default_rng(41)
    profile = Profile("".join(rng.choice(list(LETTERS), 10_000)),
                      rng.integers(-20, 21, (10_000, 20)))
    table = profile.table(BLOSUM62)
    subjects = [rng.integers(0, 24, n).astype(np.uint8) for n in (1, 300, 2_500)]
    residues = np.concatenate(subjects)
    offsets = np.concatenate([[0], np.cumsum([s.size for s in subjects])]).astype(np.int64)
    pairs = np.stack([np.zeros(3, np.int64), np.arange(3)], axis=1)
    for code in MODES.values():
        scanned = scores_many([profile.codes()], residues, offsets, table, 11, 1, code)[0]
        aligned = engines.align_pairs(Device("cpu"), [profile.codes()], subjects, pairs,
                                      table, 11, 1, code, traceback=True)
        assert scanned.tolist() == [raw[0] for raw in aligned], code


def test_the_gpu_batch_engine_takes_a_profile_pair_by_its_padded_strips():
    from wavedp.engines.cuda import batch

    assert batch.takes(5000, 5000, profile=True) and not batch.takes(5000, 5000)
    assert not batch.takes(8, 30_000_000, profile=True)  # 8 x 3e7 cells, 7 GB of strips
    assert not batch.takes(0, 10, profile=True)
