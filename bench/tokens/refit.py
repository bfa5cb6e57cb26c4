"""The linear program behind a refit of the `default` estimator's constants.

Needs Python 3 with numpy and scipy (HiGHS); not a dependency of the project.

Inputs are files written by `node bench/tokens/tune.js --features A,B,... --json FILE`: for each page,
the three real counts, the estimate's raw cost and its derivative in each named constant (the
estimate is linear in every constant, so cost(x) = rest + d . x). Pass the pages cut by the real
server (`--server`, what the objective is measured on) and any other pages (in-process pages of
every kind, adversarial strings) as constraints.

    python3 bench/tokens/refit.py --bounds bounds.json --objective server.json \
        --constraints fake.json:cur_fake.json adversarial.json:cur_adv.json --current cur.json

bounds.json maps each constant to [value before the refit, lowest, highest]; cur*.json map each
constant to the value it had when that file's pages were measured.

The program: minimize the hinge waste of the common training kinds' pages, the mean of
max(0, estimate / o200k - HINGE) (the pages above the median are what the median waste is made of),
plus a small weight on the mean waste of the other training kinds; subject to, on every training
page (held-out kinds never constrain nor score), estimate >= 1.05 x o200k and cl100k and
1.04 x Claude, or, where the constants before the refit were already under that margin, no lower
than they made it; adversarial strings (kind "adversarial") >= ADV x the largest real count;
and hard floors where every tokenizer needs a token (a letter escape, a space before a digit).
Prints the new constants as a `--set` list for tune.js.
"""

import argparse
import json

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix, identity, vstack
from scipy.sparse import hstack as sp_hstack

GROUPS_BEFORE_ESCAPE = ["G_PUNCT", "G_LATIN", "G_SPACE", "G_DIGIT", "G_ESC"]


def floors(names):
    """Hard floors where every tokenizer needs a token, and no table entry below zero."""
    out = []
    escape = {"CHAR_COST.BACKSLASH": 1, "PIECE_COST.G_BS": 1, "CHAR_COST.ESCL": 1}
    # a letter escape (\\n) is at least a token after any piece
    out.append((escape, 1024))
    for g in GROUPS_BEFORE_ESCAPE:
        out.append(({**escape, f"PIECE_AFTER.{g}>G_BS": 1}, 1024))
    # a space before a digit is a token of its own, and so is the digit; after a run of spaces,
    # the run (but its last space) is one more
    out.append(({"CHAR_COST.SPACE": 1, "PIECE_COST.G_SPACE": 1, "PIECE_AFTER.G_SPACE>G_DIGIT": 1}, 1024))
    out.append(({"CHAR_COST.SPACE": 2, "PIECE_COST.G_SPACE": 1, "PIECE_AFTER.G_SPACE>G_DIGIT": 1,
                 "SPACES_BEFORE_DIGIT_COST": 1}, 2048))
    out.append(({"PIECE_COST.G_DIGIT": 1, "CHAR_COST.DIGIT": 1}, 1024))
    out.append(({"DIGIT_GROUP_COST": 1, "CHAR_COST.DIGIT": 1}, 1024))
    # no piece cost below zero: every piece pair, and a punctuation escape after each group
    for name in names:
        if name.startswith("PIECE_AFTER."):
            to = name.split(">")[1]
            out.append(({f"PIECE_COST.{to}": 1, name: 1}, 0))
    out.append(({"PIECE_COST.G_BS": 1, "PUNCT_ESCAPE_AFTER.G_PUNCT": 1, "PIECE_AFTER.G_PUNCT>G_BS": 1}, 0))
    for g in ["G_LATIN", "G_SPACE", "G_DIGIT"]:
        out.append(({"PIECE_COST.G_BS": 1, f"PUNCT_ESCAPE_AFTER.{g}": 1, f"PIECE_AFTER.{g}>G_BS": 1}, 0))
    return out


def load(path, cur_path, names, head, args):
    data = json.load(open(path))
    assert data["features"] == names, f"{path}: other constants"
    cur = json.load(open(cur_path))
    pages = [p for p in data["pages"] if not p["heldOut"]]
    d = np.array([p["d"] for p in pages])
    cost = np.array([p["cost"] for p in pages])
    rest = cost - d @ np.array([cur[n] for n in names], float)
    real = np.array([[p["o200k"], p["cl100k"], p["claude"]] for p in pages], float)
    adv = np.array([p["kind"] == "adversarial" for p in pages])
    margin_oc = np.where(adv, args.adv, args.margin)
    margin_claude = np.where(adv, args.adv, args.margin_claude)
    need = np.maximum(margin_oc * real[:, :2].max(axis=1), margin_claude * real[:, 2])
    need = np.minimum(need, rest + d @ head)  # under the margin before: no lower than before
    need = np.maximum(need, args.floor * real.max(axis=1))  # but never under the real counts
    common = np.array([p["common"] for p in pages])
    return d, rest, need, real[:, 0], common


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bounds", required=True)
    ap.add_argument("--objective", required=True, help="FILE:CUR, pages the waste is scored on")
    ap.add_argument("--constraints", nargs="*", default=[], help="FILE:CUR, more pages to keep safe")
    ap.add_argument("--margin", type=float, default=1.05)
    ap.add_argument("--margin-claude", type=float, default=1.04)
    ap.add_argument("--adv", type=float, default=1.0)
    ap.add_argument("--floor", type=float, default=1.0, help="every page at least FLOOR x its largest real count")
    ap.add_argument("--constraint-common-weight", type=float, default=0.0,
                    help="weight of the common pages of the constraint files in the hinge objective")
    ap.add_argument("--hinge", type=float, default=1.20)
    ap.add_argument("--stay", type=float, default=0.0,
                    help="objective weight of each constant's distance from its value before, per token")
    ap.add_argument("--other-weight", type=float, default=0.1)
    args = ap.parse_args()
    bounds = json.load(open(args.bounds))
    names = json.load(open(args.objective.split(":")[0]))["features"]
    head = np.array([bounds[n][0] for n in names], float)
    sets = [load(*spec.split(":"), names, head, args) for spec in [args.objective, *args.constraints]]
    d_obj, rest_obj, _, o_obj, common = sets[0]
    # hinge terms: the common pages of the objective file (weight 1 in all) and, with
    # --constraint-common-weight, those of each constraint file (that weight in all, per file)
    hinge = [(d_obj[common], rest_obj[common], o_obj[common], 1.0)]
    if args.constraint_common_weight > 0:
        hinge += [(d[c], r[c], o[c], args.constraint_common_weight) for d, r, _, o, c in sets[1:] if c.any()]
    dc = np.vstack([h[0] for h in hinge])
    rc = np.concatenate([h[1] for h in hinge])
    oc = np.concatenate([h[2] for h in hinge])
    weights = np.concatenate([np.full(len(h[2]), h[3] / len(h[2])) for h in hinge])
    others = [(d[~c], o[~c]) for d, _, _, o, c in sets[1:]]
    other_d = np.vstack([d for d, _ in others]) if others else np.zeros((0, len(names)))
    other_o = np.concatenate([o for _, o in others]) if others else np.zeros(0)
    n, m = len(names), len(oc)
    # variables: the constants x (n), the hinge slacks (m), and u >= |x - head| (n), which
    # --stay charges so that constants the constraints do not need to move stay where they were
    width = n + m + n
    rows = [sp_hstack([csr_matrix(-d), csr_matrix((len(d), m + n))]) for d, _, _, _, _ in sets]
    rhs = [rest - need for _, rest, need, _, _ in sets]
    for coef, floor in floors(names):
        row = np.zeros(width)
        for name, value in coef.items():
            if name in names:
                row[names.index(name)] = -value
        rows.append(csr_matrix(row))
        rhs.append(np.array([-floor]))
    # hinge: d x / o - s <= HINGE - rest / o
    rows.append(sp_hstack([csr_matrix(dc / oc[:, None]), -identity(m, format="csr"), csr_matrix((m, n))]))
    rhs.append(args.hinge - rc / oc)
    # x - u <= head and -x - u <= -head
    eye = identity(n, format="csr")
    rows.append(sp_hstack([eye, csr_matrix((n, m)), -eye]))
    rhs.append(head)
    rows.append(sp_hstack([-eye, csr_matrix((n, m)), -eye]))
    rhs.append(-head)
    other_cost = (args.other_weight / max(len(other_o), 1)) * ((1 / other_o) @ other_d) if len(other_o) else np.zeros(n)
    objective = np.concatenate([other_cost, weights, np.full(n, args.stay / 1024)])
    var_bounds = [(bounds[k][1], bounds[k][2]) for k in names] + [(0, None)] * (m + n)
    res = linprog(objective, A_ub=vstack(rows, format="csr"), b_ub=np.concatenate(rhs), bounds=var_bounds, method="highs")
    print(res.message)
    x = np.ceil(res.x[:n] - 1e-6).astype(int)
    waste_before = np.median(((rest_obj + d_obj @ head) / o_obj)[common])
    waste_after = np.median(((rest_obj + d_obj @ x) / o_obj)[common])
    print(f"median waste of the common training pages: {waste_before:.4f} -> {waste_after:.4f}")
    for spec, (d, rest, _, o, c) in zip([args.objective, *args.constraints], sets):
        if c.any():
            before = np.median(((rest + d @ head) / o)[c])
            after = np.median(((rest + d @ x) / o)[c])
            print(f"  {spec.split(':')[0]}: common pages {int(c.sum())}, median waste {before:.4f} -> {after:.4f}")
    for name, old, new in zip(names, head, x):
        if int(old) != new:
            print(f"  {name:30s} {int(old):6d} -> {new:6d}")
    print("--set " + ",".join(f"{k}={v}" for k, v in zip(names, x)))


if __name__ == "__main__":
    main()
