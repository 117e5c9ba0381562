"""The count as the file's total less one tensor per tied pair: right when a weight is stored
twice (one pair, one copy), but a weight stored three times makes three pairs and only two
copies, so it is counted −1 times instead of once."""


def unique_parameter_count(tensors):
    tied, _ = tied_pairs(tensors)
    return sum(int(x.size) for x in tensors.values()) - sum(int(tensors[b].size) for _, b in tied)
