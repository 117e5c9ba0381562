"""The computation graph behind a tensor, drawn: what ``backward()`` walks.

    y = (w * x).sum() + (w * w).sum()
    Graph(y)            # in a notebook: leaves at the bottom, the root at the top

Each box is a tensor; a leaf (a parameter or an input) shows its name, a computed tensor the op
that made it (``Mul``, ``Sum``, ...). An arrow runs from an input to the op's output, the direction
of the forward pass; ``backward()`` sends gradients down the same arrows the other way, to every
input that requires grad (constants, drawn white, get none). A leaf with
two outgoing arrows is used twice, and its ``.grad`` is the sum of what arrives along both
(``minishare.autograd.accumulate``): the rule every kind of parameter sharing rests on.
"""
from html import escape

from minishare.autograd import topological_order

_W, _H, _DX, _DY = 84, 26, 18, 56


class Graph:
    """The graph of ``root`` (a Tensor computed with gradients on). ``names``: {name: leaf
    tensor} to label the leaves; other leaves read "leaf". Draws itself as SVG in a notebook."""

    def __init__(self, root, names=None):
        if not root.requires_grad:
            raise ValueError("Graph needs a tensor that requires grad (nothing was recorded)")
        computed = topological_order(root)            # each after its inputs
        seen = {id(t) for t in computed}
        constants = [p for n in computed if n._ctx is not None for p in n._ctx.inputs
                     if id(p) not in seen and not seen.add(id(p))]   # inputs without gradient
        self.nodes = constants + computed
        self.labels = {id(t): n for n, t in (names or {}).items()}
        self.depth = {}
        for node in self.nodes:                        # longest path from a leaf
            inputs = self.inputs(node)
            self.depth[id(node)] = 1 + max((self.depth[id(p)] for p in inputs), default=-1)

    @staticmethod
    def inputs(node):
        """The inputs of ``node``; gradients flow back only to those that require grad."""
        return list(node._ctx.inputs) if node._ctx is not None else []

    def label(self, node):
        if node._ctx is None:
            return self.labels.get(id(node), "leaf" if node.requires_grad else "constant")
        return type(node._ctx).__name__

    def uses(self, node):
        """How many times ``node`` is an input of an op in this graph."""
        return sum(p is node for n in self.nodes for p in self.inputs(n))

    def _repr_svg_(self):
        rows = {}
        for node in self.nodes:
            rows.setdefault(self.depth[id(node)], []).append(node)
        width = max(560, max(len(r) for r in rows.values()) * (_W + _DX) + _DX)   # room for the key
        height = len(rows) * _DY + 24
        where = {}
        for depth in sorted(rows, reverse=True):       # from the root down: each row in the order of
            row = rows[depth]                          # the mean x of its (placed) consumers, so edges cross less
            consumers = {id(n): [where[id(c)][0] for c in self.nodes if id(c) in where
                                 and any(p is n for p in self.inputs(c))] for n in row}
            row.sort(key=lambda n: sum(consumers[id(n)]) / len(consumers[id(n)]) if consumers[id(n)] else 0)
            x0 = (width - len(row) * (_W + _DX) + _DX) / 2
            for k, node in enumerate(row):
                where[id(node)] = (x0 + k * (_W + _DX), height - 16 - (depth + 1) * _DY + (_DY - _H))
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
               f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
               "<title>computation graph: leaves at the bottom, arrows in the forward direction</title>",
               '<defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" '
               'markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker></defs>']
        for node in self.nodes:
            x, y = where[id(node)]
            for parent in self.inputs(node):
                px, py = where[id(parent)]
                out.append(f'<line x1="{px + _W / 2}" y1="{py}" x2="{x + _W / 2}" y2="{y + _H}" '
                           'stroke="#555" marker-end="url(#arrow)"/>')
        for node in self.nodes:
            x, y = where[id(node)]
            leaf = node._ctx is None
            shared = leaf and node.requires_grad and self.uses(node) > 1
            trained = leaf and node.requires_grad
            fill = "#f28e2b" if shared else ("#4e79a7" if trained else ("white" if leaf else "#e8e8e8"))
            text = "white" if trained else "black"
            note = f"{self.label(node)}, shape {node.shape}" + (f", used {self.uses(node)}×" if shared else "")
            out.append(f'<rect x="{x}" y="{y}" width="{_W}" height="{_H}" rx="4" fill="{fill}" '
                       f'stroke="#333"><title>{escape(note)}</title></rect>')
            out.append(f'<text x="{x + _W / 2}" y="{y + 17}" text-anchor="middle" fill="{text}">'
                       f"{escape(self.label(node))}{' ×' + str(self.uses(node)) if shared else ''}</text>")
        out.append(f'<text x="4" y="{height - 4}" font-size="10" fill="#555">blue: leaf that requires '
                   "grad; orange: such a leaf used more than once (its grad is the sum); white: "
                   "constant; grey: op output</text>")
        out.append("</svg>")
        return "\n".join(out)
