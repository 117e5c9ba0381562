"""A quantile that falls back on the normal's 1.96 beyond df = 30, the last row of the usual
printed table: t(0.975, 40) is 2.021, and the interval is 3% too narrow there."""
_t_quantile = t_quantile


def t_quantile(p, df):
    if df > 30 and p == 0.975:
        return 1.959964
    return _t_quantile(p, df)
