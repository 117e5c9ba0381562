"""The update added without its router score, h + f(h): the selection stays, but the router
no longer gets a gradient and the update is not the paper's g f(h) + h."""


class ExpertChoiceRouter(ExpertChoiceRouter):
    def forward(self, x, block):
        B, T, H = x.shape
        rows = np.arange(B)[:, None]
        candidates = np.broadcast_to(np.arange(T), (B, T))
        active = np.zeros((len(self.routers), B, T), dtype=bool)
        h = x
        for r, k in enumerate(capacity_tokens(self.capacities, T)):
            n = candidates.shape[1]
            z = self.routers[r](F.gather_tokens(h, candidates)).reshape(B, n)
            g = 0.5 * (1 + F.tanh(0.5 * z))
            top = np.sort(np.argsort(-g.numpy(), axis=1, kind="stable")[:, :k], axis=1)
            selected = np.take_along_axis(candidates, top, axis=1)
            update = block(r, F.gather_tokens(h, selected))
            h = F.scatter_add_tokens(h, selected, update)
            active[r, rows, selected] = True
            candidates = selected
        return h, active
