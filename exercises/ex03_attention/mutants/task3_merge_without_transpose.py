"""Merges the heads back with a reshape of (B, heads, T, d) to (B, T, H), forgetting to move
the head axis back behind the positions first."""


class GroupedQueryAttention(GroupedQueryAttention):
    def forward(self, x, mask=None, context=None):
        context = x if context is None else context
        B, Tq, H = x.shape
        d = H // self.num_heads

        def heads(t, count):
            return t.reshape(B, t.shape[1], count, d).transpose(0, 2, 1, 3)

        out, _ = scaled_dot_product_attention(heads(self.query(x), self.num_heads),
                                              heads(self.key(context), self.num_kv_heads),
                                              heads(self.value(context), self.num_kv_heads), mask)
        return self.dense(out.reshape(B, Tq, H))
