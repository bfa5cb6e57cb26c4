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
from scipy.sparse import csr_matrix, vstack

FLOORS = [
    # a letter escape (\\n) is at least a token after any piece
    ({"CHAR_COST.BACKSLASH": 1, "PIECE_COST.G_BS": 1, "CHAR_COST.ESCL": 1}, 1024),
    ({"CHAR_COST.BACKSLASH": 1, "PIECE_COST.G_BS": 1, "PIECE_AFTER.G_PUNCT>G_BS": 1, "CHAR_COST.ESCL": 1}, 1024),
    # a space before a digit is a token of its own, and so is the digit
    ({"CHAR_COST.SPACE": 1, "PIECE_COST.G_SPACE": 1, "PIECE_AFTER.G_SPACE>G_DIGIT": 1}, 1024),
    # no piece cost below zero
    ({"PIECE_COST.G_BS": 1, "PIECE_AFTER.G_PUNCT>G_BS": 1}, 0),
    ({"PIECE_COST.G_BS": 1, "PIECE_AFTER.G_ESC>G_BS": 1}, 0),
    ({"PIECE_COST.G_BS": 1, "PIECE_AFTER.G_PUNCT>G_BS": 1, "PUNCT_ESCAPE_AFTER.G_PUNCT": 1}, 0),
    ({"PIECE_COST.G_BS": 1, "PUNCT_ESCAPE_AFTER.G_LATIN": 1}, 0),
    ({"PIECE_COST.G_BS": 1, "PUNCT_ESCAPE_AFTER.G_SPACE": 1}, 0),
    ({"PIECE_COST.G_BS": 1, "PIECE_AFTER.G_DIGIT>G_BS": 1, "PUNCT_ESCAPE_AFTER.G_DIGIT": 1}, 0),
]


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
    ap.add_argument("--hinge", type=float, default=1.20)
    ap.add_argument("--other-weight", type=float, default=0.1)
    args = ap.parse_args()
    bounds = json.load(open(args.bounds))
    names = json.load(open(args.objective.split(":")[0]))["features"]
    head = np.array([bounds[n][0] for n in names], float)
    sets = [load(*spec.split(":"), names, head, args) for spec in [args.objective, *args.constraints]]
    d_obj, rest_obj, _, o_obj, common = sets[0]
    dc, rc, oc = d_obj[common], rest_obj[common], o_obj[common]
    others = [(d[~c], o[~c]) for d, _, _, o, c in sets[1:]]
    other_d = np.vstack([d for d, _ in others]) if others else np.zeros((0, len(names)))
    other_o = np.concatenate([o for _, o in others]) if others else np.zeros(0)
    n, m = len(names), len(oc)
    rows = [csr_matrix(np.hstack([-d, np.zeros((len(d), m))])) for d, _, _, _, _ in sets]
    rhs = [rest - need for _, rest, need, _, _ in sets]
    for coef, floor in FLOORS:
        row = np.zeros(n + m)
        for name, value in coef.items():
            if name in names:
                row[names.index(name)] = -value
        rows.append(csr_matrix(row))
        rhs.append(np.array([-floor]))
    # hinge: d x / o - s <= HINGE - rest / o
    rows.append(csr_matrix(np.hstack([dc / oc[:, None], -np.eye(m)])))
    rhs.append(args.hinge - rc / oc)
    other_cost = (args.other_weight / max(len(other_o), 1)) * ((1 / other_o) @ other_d) if len(other_o) else np.zeros(n)
    objective = np.concatenate([other_cost, np.full(m, 1.0 / m)])
    var_bounds = [(bounds[k][1], bounds[k][2]) for k in names] + [(0, None)] * m
    res = linprog(objective, A_ub=vstack(rows), b_ub=np.concatenate(rhs), bounds=var_bounds, method="highs")
    print(res.message)
    x = np.ceil(res.x[:n] - 1e-6).astype(int)
    waste_before = np.median(((rest_obj + d_obj @ head) / o_obj)[common])
    waste_after = np.median(((rest_obj + d_obj @ x) / o_obj)[common])
    print(f"median waste of the common training pages: {waste_before:.4f} -> {waste_after:.4f}")
    for name, old, new in zip(names, head, x):
        if int(old) != new:
            print(f"  {name:30s} {int(old):6d} -> {new:6d}")
    print("--set " + ",".join(f"{k}={v}" for k, v in zip(names, x)))


if __name__ == "__main__":
    main()
