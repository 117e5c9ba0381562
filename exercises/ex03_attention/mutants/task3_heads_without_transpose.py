"""Splits (B, T, H) into heads with a reshape to (B, heads, T, d) alone: the numbers of
different positions get mixed into one head instead of each head's slice of every position."""


class GroupedQueryAttention(GroupedQueryAttention):
    def forward(self, x, mask=None, context=None):
        context = x if context is None else context
        B, Tq, H = x.shape
        d = H // self.num_heads

        def heads(t, count):
            return t.reshape(B, count, t.shape[1], d)

        out, _ = scaled_dot_product_attention(heads(self.query(x), self.num_heads),
                                              heads(self.key(context), self.num_kv_heads),
                                              heads(self.value(context), self.num_kv_heads), mask)
        return self.dense(out.transpose(0, 2, 1, 3).reshape(B, Tq, H))
