"""The accelerator's instruction set: one module per unit with its descriptor, the descriptor's legality, the plain
reference of what the unit computes and the RTL's port values, plus the units' cycle models and the lane-form search.

    contract.py   the contraction unit's loop-nest descriptor and its lane forms (rtl/tt_contract.v)
    loop_nest.py  the nest's walks and the contraction's plain reference (rtl/tt_loop_addr.v)
    lanes.py      the fastest lane form of a contraction for an engine
    ewise.py      the element-wise unit (rtl/tt_ewise.v)
    sce.py        the softmax cross-entropy gradient unit (rtl/tt_sce.v)
    rank.py       the rank-update unit (rtl/tt_rank.v)
    timing.py     every unit's cycles from start to done

The units know no tensor, no format and no program: golden/lowering.py turns a compiled op into a descriptor, and
golden/program.py packs the descriptors into the program memory.
"""
