"""Keys and values always from x: self-attention is right, but cross-attention silently attends
to the queries' own sequence instead of the context."""


class GroupedQueryAttention(GroupedQueryAttention):
    def forward(self, x, mask=None, context=None):
        B, Tq, H = x.shape
        d = H // self.num_heads

        def heads(t, count):
            return t.reshape(B, t.shape[1], count, d).transpose(0, 2, 1, 3)

        out, _ = scaled_dot_product_attention(heads(self.query(x), self.num_heads),
                                              heads(self.key(x), self.num_kv_heads),
                                              heads(self.value(x), self.num_kv_heads), mask)
        return self.dense(out.transpose(0, 2, 1, 3).reshape(B, Tq, H))
