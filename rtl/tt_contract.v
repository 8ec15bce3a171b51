`default_nettype none
// tt_contract: the contraction engine: LANES multiply-accumulate lanes. Executes one CONTRACT descriptor
// (golden/isa/contract.py ContractDesc, SPEC 5.1) bit-exactly:
//   out[o] = RQ(sum_k a[.] * b[.], shift, mode)                       (accumulate = 0)
//   out[o] = SAT(out[o] + RQ(sum_k a[.] * b[.], shift, mode))         (accumulate = 1)
// with saturation to out_w bits, one LFSR draw per output element in the nest's order (STOCHASTIC only,
// SPEC 2.2), a per-op saturation count (an accumulated element can count twice: the RQ clamp and the clamp
// of the sum, as in the golden machine) and max |word written| for shift control (SPEC 4.2).
//
// Two forms of descriptor (golden/isa/lanes.py with_lanes):
// - direct (lanes = 1): one MAC per cycle, a and b read from the memory ports at the loop nest's addresses.
// - lane form (1 < lanes <= LANES): the innermost output loop (loop NRED, the lane loop, count = lanes) indexes
//   only b. A second loop nest copies b into LANES lane-local buffers through the b port, one word a cycle (lane =
//   the lane loop's index, buffer word = sum idx * stride_buf over the other loops), beside the compute nest,
//   which walks the loops without the lane loop: each cycle one a word is broadcast to every lane, each lane reads
//   its buffer at the same word, and a group of `lanes` output elements completes per reduction. The load goes a
//   slice (one index of b's outer buffer loops: every lane's words of one group) at a time, and a group starts
//   only when its slice is in every buffer, so a b word is used as often as the nest reuses it while the rest
//   loads. A group's sums drain one element per cycle, lane 0 first (the output addresses stride_o of the lane
//   loop apart; the draws go in the nest's order, the op's element order of SPEC 5.1); a group starts at least
//   `lanes` cycles after the previous one so the drain never overruns.
//   Preload (PRELOAD = 1; a build without it has one set, half the buffer memory, and refuses preload fields): the
//   buffers hold two sets of BUF_DEPTH words. An op that carries the next op's b walk (pre_* fields)
//   walks it into the other set once its own walk is done (the load nest registers the walk's configuration from
//   the descriptor the cycle after the own walk's last beat, and restarts the next cycle), on past this op's done. The next op, `preloaded`, computes from that set and lets the walk run on instead of
//   starting its own: its groups wait only for words not yet loaded. The compiler pairs only ops where this op does
//   not write that b and the banks have a port for it (golden/program.py link_preloads); the sequencer keeps the
//   contraction unit's ports routed between two contraction records.
//   The compiler guarantees that the buffer words fit BUF_DEPTH (golden/program.py); the RTL checks the lane loop.
//   Vector load (vec_load, with VEC > 1; pre_vec_load for the preload's walk): the load nest walks the lane loop VEC
//   lanes a beat, reading the whole bank row of VEC words at the beat's address through the b port (b_rd_n1) into
//   VEC buffers at once: lanes / VEC beats per buffer word instead of lanes. It needs lanes a multiple of VEC, b's
//   lane loop at stride 1 and b's base and other strides multiples of VEC (golden/isa/contract.py vec_ok), so that every
//   row read is aligned and all b's.
//   Wide drain (vec_store, with DRAIN > 1): a group's sums leave the drain DRAIN a cycle (lane 0's first) through
//   DRAIN requantisers with DRAIN draws a cycle (tt_lfsr's leap: still one draw per element in the nest's order), and
//   each beat writes a run of DRAIN consecutive words at once (o_wr_run; accumulating, it reads the old run from the
//   row of o_rd_vec_data first): a group takes max(K, lanes / DRAIN) cycles. It needs lanes a multiple of DRAIN, the
//   output's lane loop at stride 1 and the output's base and other strides multiples of DRAIN (golden/isa/contract.py
//   drain_ok), so that every run is aligned, inside one row, and all the op's.
//   Lane sum (lane_sum, with VEC > 1): the lanes split the reduction. The lane loop is the sum loop (count R, a
//   power of two up to VEC that divides LANES, output stride 0): a reduction index stepping a at stride 1. With
//   lanes = L x R, L > 1, loop NRED + 1 is the output lane loop (count L, stepping b only), held at 0 by the compute
//   nest too. Lane (c, r) is lane c + (LANES / R) r: each beat reads the row of VEC words of a holding its aligned run
//   of R words (a_rd_n1; lane (c, r) MACs word r of the run with its buffer word), and a group's sums enter the fold
//   trees (tt_lane_sum, log2 R stages), whose L sums drain as the group's L elements (DRAIN a cycle in a wide drain
//   along the output lane loop): a group takes max(K, L / DRAIN) cycles. A vector load runs along the sum loop where
//   R = VEC, along the output lane loop where LANES / R is a multiple of VEC (its rows of lanes are then aligned).
//   It needs a's base and other strides multiples of R (golden/isa/contract.py lane_sum_ok, vec_ok and drain_ok with the
//   build's lanes).
//   Rows (rows, with VEC > 1): the outer product of a column of b and a run of a. lanes = LANES = L x R: the lane
//   loop (count L, stepping b only) and outside it loop NRED + 1, the rows loop (count R, a power of two up to VEC
//   that divides LANES, stepping a alone at stride 1), both held at 0 by the compute nest. Lane (c, r) is lane
//   c + L r: it takes word r of a's run of R words, which may start anywhere in a row (the bank reads the columns
//   before its first one a row further on) and its buffer word of column c; the load walks the lane loop alone and
//   writes each word into its column's R lanes. A group is L x R elements, each lane's own, drained lane by lane
//   (DRAIN a cycle in a wide drain along the lane loop), the rows loop's output stride after each row (golden/isa/contract.py
//   rows_ok, vec_ok, drain_ok). Idle rows (idle_rows > 0): loop NRED + 2 is the chunk loop outside the rows loop,
//   and in its last index the last idle_rows rows are no elements: that group reads a run of R - idle_rows words and
//   drains only its live rows (no draws for the idle ones); the groups still start max(K, L R / DRAIN) apart.
//
// Memories are outside (the top owns the banks): synchronous-read ports with a fixed latency of MEM_LAT cycles
// (address and rd_en in cycle c, data valid in cycle c + MEM_LAT), read ports for a, b and (accumulate only)
// the old output word, and one write port (the write is taken at the end of the cycle wr_en is high). Read data
// are signed; a narrow bank sign-extends its words. Each output address is read and written once per op, and
// the old word is read when its element leaves the drain, MEM_LAT cycles before it is requantised.
//
// Descriptor ports: loop i of the packed buses in [W*i +: W], loop 0 the innermost; loops 0..NRED-1 are the
// reductions, NRED..NRED+NOUT-1 the output loops (golden.isa.contract.pack_ports). They must be held stable from
// start until done. Strides and addresses wrap modulo 2^ADDR_W (tt_loop_addr).
//
// Timing (the memories never back-pressure; golden/isa/timing.py contract_cycles, checked by the block test):
// start in cycle 0, the descriptor check in cycle 1 (tt_op_ctrl), then the compute nest's beats, each issued a
// cycle after the nest gives it (a register slice, tt_skid), in the lane form beside the load beats (a group waits
// for its slice MEM_LAT + 1 cycles after the slice's last load beat); a
// group's sums latch into the drain MAC_LAT + MEM_LAT cycles after its last beat, leave it one per cycle, wait
// MEM_LAT cycles for the old word, then requant (3), clamp, write and statistics (tt_writeback); done the cycle
// after the statistics of the last element.
//
// Errors are found in the check cycle, before any memory access or draw, so an illegal op leaves every memory
// and the LFSR untouched: done and error rise the cycle after it with error_code 1 (shift outside -16..47, the
// range tt_requant accepts; its own shift_err can then never fire), 2 (out_w outside 2..OUT_W), 3 (a loop
// count of 0) or 4 (lanes 0 or above LANES, or a lane loop whose count is not lanes or whose a stride is not
// 0, or pre_lanes above LANES, or a preload or a preloaded op in a PRELOAD = 0 build, or a vector load that breaks vec_ok's rules or that a VEC = 1 build cannot do, or a
// wide drain that breaks drain_ok's or that a DRAIN = 1 build cannot do, or a lane sum that breaks lane_sum_ok's, has
// a sum loop the build's trees cannot take (R above VEC or not dividing LANES) or is not in the lane form, or rows
// that break rows_ok's rules, are not all the lanes or have R the build cannot take, idle rows outside rows or not
// below R, or a preload walk of a lane sum or of rows that the build cannot load). A start while busy is ignored;
// seed_load belongs between ops.
module tt_contract #(
  parameter integer NOUT      = 6,   // output loops
  parameter integer NRED      = 4,   // reduction loops (NOUT + NRED <= 10)
  parameter integer CNT_W     = 16,  // loop count width
  parameter integer ADDR_W    = 20,  // element address and stride width
  parameter integer A_W       = 16,  // a read data width, signed
  parameter integer B_W       = 16,  // b read data width, signed
  parameter integer OUT_W     = 16,  // output word width (the widest out_w), 2..32
  parameter integer ACC_W     = 48,  // accumulator (SPEC 1.2)
  parameter integer MEM_LAT   = 1,   // read latency of the memory ports, 1..8
  parameter integer MAC_REG   = 2,   // registers in the MAC's multiply: 0, 1 (product), 2 (operands and product)
  parameter integer LANES     = 1,   // MAC lanes, 1..255 (golden/arch.py LANE_W)
  parameter integer BUF_DEPTH = 1,   // words per lane buffer (LANES > 1), 1..2^BUF_W
  parameter integer PRELOAD   = 1,   // 1: the buffers hold two sets of BUF_DEPTH words and ops preload; 0: one set
  parameter integer BUF_W     = 12,  // buffer stride field width (golden/arch.py BUF_W), 1..ADDR_W
  parameter integer VEC       = 1,   // words a vector load reads into the buffers: 1 (none), 2, 4, 8 or 16 (<= LANES)
  parameter integer DRAIN     = 1,   // elements the drain writes a cycle: 1, 2, 4, 8 or 16 (<= VEC: a run is in a row)
  parameter [63:0] TECH      = "generic"  // the lane buffers' and multipliers' technology (rtl/prim/)
) (
  input  wire                           clk,
  input  wire                           rst,
  // random stream (SPEC 3): persistent across ops
  input  wire                           seed_load,
  input  wire [31:0]                    seed,
  output wire [31:0]                    lfsr_state,
  // op descriptor
  input  wire                           start,
  input  wire [ADDR_W-1:0]              a_base,
  input  wire [ADDR_W-1:0]              b_base,
  input  wire [ADDR_W-1:0]              o_base,
  input  wire [(NOUT+NRED)*CNT_W-1:0]   counts,
  input  wire [(NOUT+NRED)*ADDR_W-1:0]  stride_a,
  input  wire [(NOUT+NRED)*ADDR_W-1:0]  stride_b,
  input  wire [(NOUT+NRED)*ADDR_W-1:0]  stride_o,
  input  wire [6:0]                     shift,       // signed
  input  wire                           mode,        // 0 nearest, 1 stochastic
  input  wire                           accumulate,
  input  wire [5:0]                     out_w,       // output width, 2..OUT_W
  input  wire [7:0]                     lanes,       // 1: direct form; 2..LANES: lane form
  input  wire [(NOUT+NRED)*BUF_W-1:0]   stride_buf,  // lane form: buffer word strides (0: not a buffer loop)
  input  wire                           vec_load,    // lane form: load b VEC words a beat
  input  wire                           vec_store,   // lane form: drain DRAIN elements a beat (wide drain)
  input  wire                           pre_vec_load,  // the same for the preload's walk
  input  wire                           lane_sum,    // lane form: the lanes split the reduction (VEC > 1)
  input  wire                           pre_lane_sum,  // the same for the preload's walk
  input  wire                           rows,        // lane form: loop NRED + 1 gives rows of lanes (VEC > 1)
  input  wire [3:0]                     idle_rows,   // rows: rows of loop NRED + 1 idle in loop NRED + 2's last index
  input  wire                           pre_rows,    // the same for the preload's walk
  // preload (lane form): this op's b was walked by the previous op; the next op's b walk (pre_lanes 0: none)
  input  wire                           preloaded,
  input  wire [7:0]                     pre_lanes,
  input  wire [ADDR_W-1:0]              pre_b_base,
  input  wire [(NOUT+NRED)*CNT_W-1:0]   pre_counts,
  input  wire [(NOUT+NRED)*ADDR_W-1:0]  pre_stride_b,
  input  wire [(NOUT+NRED)*BUF_W-1:0]   pre_stride_buf,
  // status
  output wire                           busy,
  output wire                           done,
  output wire                           error,
  output wire [3:0]                     error_code,
  output wire [31:0]                    sat_count,   // this op's saturations, saturating (from the cycle after done)
  output wire [OUT_W-1:0]               maxabs,      // this op's max |word written| (from the cycle after done)
  // memory ports
  output wire                           a_rd_en,
  output wire [ADDR_W-1:0]              a_rd_addr,
  input  wire [A_W-1:0]                 a_rd_data,
  output wire [3:0]                     a_rd_n1,     // the words the read takes after its address's (a run of a)
  input  wire [VEC*A_W-1:0]             a_rd_vec_data,
  output wire                           b_rd_en,
  output wire [ADDR_W-1:0]              b_rd_addr,
  input  wire [B_W-1:0]                 b_rd_data,
  output wire [3:0]                     b_rd_n1,     // the words the read takes after its address's (a vector load)
  input  wire [VEC*B_W-1:0]             b_rd_vec_data,
  output wire                           o_rd_en,
  output wire [ADDR_W-1:0]              o_rd_addr,
  input  wire [OUT_W-1:0]               o_rd_data,
  output wire [3:0]                     o_rd_n1,     // the words the read takes after its address's (an old run)
  input  wire [VEC*OUT_W-1:0]           o_rd_vec_data,
  output wire                           o_wr_en,
  output wire                           o_wr_run,    // the write is a run of DRAIN words from o_wr_addr
  output wire [ADDR_W-1:0]              o_wr_addr,
  output wire [DRAIN*OUT_W-1:0]         o_wr_data    // word i in [OUT_W*i +: OUT_W]; one word: word 0
);

  localparam integer NLOOPS = NOUT + NRED;
  localparam integer LANE = NRED;  // the lane loop: the innermost output loop
  localparam integer OUT_LANE = (NOUT > 1) ? NRED + 1 : NRED;  // a lane sum's output lanes; rows' rows (NOUT > 1)
  localparam integer RQ_LAT = 3;  // tt_requant's LATENCY
  localparam integer MAC_LAT = 1 + MAC_REG;  // tt_mac_array's latency
  localparam integer LANE_IW = (LANES > 1) ? $clog2(LANES) : 1;  // lane index bits
  localparam integer BUF_AW = (BUF_DEPTH > 1) ? $clog2(BUF_DEPTH) : 1;  // buffer word address bits
  localparam integer TAG_W = ADDR_W + 5;  // {addr_o, short, last, last_red, first, valid} of a beat
  localparam [31:0] OUT_W_U = OUT_W;
  localparam [31:0] LANES_U = LANES;
`include "tt_arch.vh"  // ERR_NONE, CT_ERR_*

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator); the
  // submodules check their own (NLOOPS, widths, ACC_W > A_W + B_W).
  generate
    if (NOUT < 1 || NRED < 0 || NOUT + NRED > 10) begin : g_bad_loops
      error_tt_contract_NOUT_must_be_at_least_1_and_NOUT_plus_NRED_at_most_10 u_error ();
    end
    if (MAC_REG < 0 || MAC_REG > 2) begin : g_bad_mac_reg
      error_tt_contract_MAC_REG_must_be_0_to_2 u_error ();
    end
    if (MEM_LAT < 1 || MEM_LAT > 8) begin : g_bad_mem_lat
      error_tt_contract_MEM_LAT_must_be_1_to_8 u_error ();
    end
    if (OUT_W < 2 || OUT_W > 32) begin : g_bad_out_w
      error_tt_contract_OUT_W_must_be_2_to_32 u_error ();
    end
    if (LANES < 1 || LANES > 255) begin : g_bad_lanes
      error_tt_contract_LANES_must_be_1_to_255 u_error ();
    end
    if (BUF_W < 1 || BUF_W > ADDR_W) begin : g_bad_buf_w
      error_tt_contract_BUF_W_must_be_1_to_ADDR_W u_error ();
    end
    if (LANES > 1 && (BUF_DEPTH < 1 || BUF_DEPTH > (1 << BUF_W))) begin : g_bad_buf_depth
      error_tt_contract_BUF_DEPTH_must_be_1_to_2_pow_BUF_W u_error ();
    end
    if (PRELOAD != 0 && PRELOAD != 1) begin : g_bad_preload
      error_tt_contract_PRELOAD_must_be_0_or_1 u_error ();
    end
    if ((VEC != 1 && VEC != 2 && VEC != 4 && VEC != 8 && VEC != 16) || (VEC > 1 && VEC > LANES)) begin : g_bad_vec
      error_tt_contract_VEC_must_be_1_2_4_8_or_16_and_at_most_LANES u_error ();
    end
    if ((DRAIN != 1 && DRAIN != 2 && DRAIN != 4 && DRAIN != 8 && DRAIN != 16) || DRAIN > VEC) begin : g_bad_drain
      error_tt_contract_DRAIN_must_be_1_2_4_8_or_16_and_at_most_VEC u_error ();
    end
  endgenerate
  localparam integer VEC_SH = (VEC > 1) ? $clog2(VEC) : 0;
  localparam [31:0] VEC_M1 = VEC - 1;
  localparam [ADDR_W-1:0] VEC_MASK = VEC_M1[ADDR_W-1:0];
  localparam [ADDR_W-1:0] VEC_STEP = VEC_MASK + 1'b1;  // a vector load's lane loop b stride
  localparam [3:0] VEC_N1 = VEC_M1[3:0];  // the row a vector load reads: VEC words (b_rd_n1)

  // The rules of a vector load (golden/isa/contract.py vec_ok: n = VEC, b's base and strides) and of a wide drain (drain_ok:
  // n = DRAIN, the output's) and of a lane sum's runs of a (lane_sum_ok: n = R): `cnt` lanes along loop `lp` a
  // multiple of n, that loop at stride 1, the base and every other stride multiples of n (`mask` = n - 1); never with
  // n = 1 (the build has none).
  localparam integer DRAIN_SH = (DRAIN > 1) ? $clog2(DRAIN) : 0;
  localparam [31:0] DRAIN_M1 = DRAIN - 1;
  localparam [3:0] DRAIN_N1 = DRAIN_M1[3:0];  // the old run a wide drain reads (o_rd_n1)
  localparam [ADDR_W-1:0] DRAIN_MASK = DRAIN_M1[ADDR_W-1:0];
  function automatic bad_runs(input integer lp, input [ADDR_W-1:0] mask, input [CNT_W-1:0] cnt,
                              input [ADDR_W-1:0] base, input [NLOOPS*ADDR_W-1:0] st);
    integer v;
    begin
      bad_runs = mask == {ADDR_W{1'b0}} || ({{(ADDR_W-CNT_W){1'b0}}, cnt} & mask) != {ADDR_W{1'b0}} ||
                 st[ADDR_W*lp +: ADDR_W] != {{(ADDR_W-1){1'b0}}, 1'b1} || (base & mask) != {ADDR_W{1'b0}};
      for (v = 0; v < NLOOPS; v = v + 1) begin
        if (v != lp && (st[ADDR_W*v +: ADDR_W] & mask) != {ADDR_W{1'b0}}) begin
          bad_runs = 1'b1;
        end
      end
    end
  endfunction

  // A lane sum's trees: R = 2^s sum lanes for 1 <= s <= SUM_SH_MAX, the most stages whose R divides LANES and is at
  // most VEC (a's run sits in one row). sum_shift: log2 R of a sum loop count, 0 where the trees cannot take it.
  localparam integer SUM_SH_MAX = (VEC_SH >= 4 && LANES % 16 == 0) ? 4 : (VEC_SH >= 3 && LANES % 8 == 0) ? 3 :
                                  (VEC_SH >= 2 && LANES % 4 == 0) ? 2 : (VEC_SH >= 1 && LANES % 2 == 0) ? 1 : 0;
  localparam VSUM = VEC > 1 && SUM_SH_MAX == VEC_SH;  // lane sums of R = VEC, loaded along their sum loop
  function automatic [3:0] sum_shift(input [CNT_W-1:0] r);
    integer t;
    begin
      sum_shift = 4'd0;
      for (t = 1; t <= SUM_SH_MAX; t = t + 1) begin
        if (r == (1 << t)) begin
          sum_shift = t[3:0];
        end
      end
    end
  endfunction

  // A vector load of a walk with lanes `ln`, loop LANE's count `r`, loop OUT_LANE's `outs`, b base `base` and b
  // strides `sb` breaks its rules: rows' along their lane loop (count r); a lane sum's along its sum loop where R is
  // VEC, else along its output lane loop where LANES / R is a multiple of VEC (rows of lanes aligned); the lane form's
  // along its lane loop.
  function automatic bad_vec(input sum, input rws, input [7:0] ln, input [CNT_W-1:0] r, input [CNT_W-1:0] outs,
                             input [ADDR_W-1:0] base, input [NLOOPS*ADDR_W-1:0] sb);
    reg [3:0] sh;
    begin
      sh = sum_shift(r);
      if (rws) begin
        bad_vec = bad_runs(LANE, VEC_MASK, r, base, sb);
      end else if (!sum) begin
        bad_vec = bad_runs(LANE, VEC_MASK, {{(CNT_W-8){1'b0}}, ln}, base, sb);
      end else if ({{(32-CNT_W){1'b0}}, r} == VEC) begin
        bad_vec = bad_runs(LANE, VEC_MASK, r, base, sb);
      end else begin
        bad_vec = sh == 4'd0 || ((LANES_U >> sh) & VEC_M1) != 32'd0 || NOUT < 2 ||
                  bad_runs(OUT_LANE, VEC_MASK, outs, base, sb);
      end
    end
  endfunction

  // A load walk's count of loop l: the loop's own where it steps b or is the lane loop, else 1 (held at index 0).
  function automatic [CNT_W-1:0] walk_count(input integer l, input [NLOOPS*CNT_W-1:0] cnt,
                                            input [NLOOPS*ADDR_W-1:0] sb);
    walk_count = (l == LANE || sb[ADDR_W*l +: ADDR_W] != {ADDR_W{1'b0}}) ? cnt[CNT_W*l +: CNT_W] :
                                                                        {{(CNT_W-1){1'b0}}, 1'b1};
  endfunction

  // ---- op control: legality check (registered at start, tt_op_ctrl), busy / done / error ----
  reg zero_count;
  integer c;
  always @* begin
    zero_count = 1'b0;
    for (c = 0; c < NLOOPS; c = c + 1) begin
      zero_count = zero_count || (counts[CNT_W*c +: CNT_W] == {CNT_W{1'b0}});
    end
  end

  wire              lane_form  = LANES > 1 && lanes != 8'd1;  // constant 0 with one lane: no phase logic is built
  wire [CNT_W-1:0]  lane_count = counts[CNT_W*LANE +: CNT_W];
  wire [CNT_W-1:0]  out_count  = counts[CNT_W*OUT_LANE +: CNT_W];  // a lane sum's output lanes, or rows' R
  wire [31:0]       lanes_u    = {24'd0, lanes};
  wire [3:0]        sum_sh     = sum_shift(lane_count);  // a lane sum's log2 R (0: not a sum loop the trees take)
  wire              sum_outs   = lanes_u != {{(32-CNT_W){1'b0}}, lane_count};  // a lane sum with output lanes (L > 1)
  wire              lane2      = SUM_SH_MAX > 0 && ((lane_sum && sum_outs) || rows);  // loop OUT_LANE is a lane loop
  // A lane sum's rules (golden/isa/contract.py lane_sum_ok, and drain_ok along its output lanes).
  wire [ADDR_W-1:0] sum_mask   = {{(ADDR_W-CNT_W){1'b0}}, lane_count - 1'b1};  // R - 1
  wire              bad_sum    = !lane_form || sum_sh == 4'd0 || stride_o[ADDR_W*LANE +: ADDR_W] != {ADDR_W{1'b0}} ||
                                 bad_runs(LANE, sum_mask, lane_count, a_base, stride_a) ||
                                 (sum_outs && (NOUT < 2 || lanes_u != {{(32-CNT_W){1'b0}}, out_count} << sum_sh ||
                                               stride_a[ADDR_W*OUT_LANE +: ADDR_W] != {ADDR_W{1'b0}} ||
                                               stride_b[ADDR_W*OUT_LANE +: ADDR_W] == {ADDR_W{1'b0}})) ||
                                 (vec_store && (!sum_outs ||
                                                bad_runs(OUT_LANE, DRAIN_MASK, out_count, o_base, stride_o)));
  // Rows' rules (golden/isa/contract.py rows_ok; all the lanes, so that lane (c, r) is c + L r); a's runs may start anywhere.
  // Idle rows (check_desc): only in rows, fewer than R, with the chunk loop (NRED + 2) outside the rows loop.
  wire [3:0]        row_sh     = sum_shift(out_count);  // log2 R of rows (0: not a rows loop the build takes)
  wire              bad_rows   = !lane_form || lane_sum || row_sh == 4'd0 || NOUT < 2 || lanes_u != LANES_U ||
                                 {{(32-CNT_W){1'b0}}, lane_count} << row_sh != lanes_u ||
                                 stride_b[ADDR_W*OUT_LANE +: ADDR_W] != {ADDR_W{1'b0}} ||
                                 stride_a[ADDR_W*OUT_LANE +: ADDR_W] != {{(ADDR_W-1){1'b0}}, 1'b1};
  wire              bad_idle   = idle_rows != 4'd0 &&
                                 (!rows || NOUT < 3 || {{(CNT_W-4){1'b0}}, idle_rows} >= out_count);
  wire [CNT_W-1:0]  plain_cols = rows ? lane_count : {{(CNT_W-8){1'b0}}, lanes};  // the lanes along the lane loop
  wire              bad_lanes  = lanes == 8'd0 || lanes_u > LANES_U ||
                                 (lane_form && !lane_sum && ((!rows && {{(32-CNT_W){1'b0}}, lane_count} != lanes_u) ||
                                                             stride_a[ADDR_W*LANE +: ADDR_W] != {ADDR_W{1'b0}})) ||
                                 (lane_form && {24'd0, pre_lanes} > LANES_U) ||
                                 (PRELOAD == 0 && (preloaded || pre_lanes != 8'd0)) ||
                                 (lane_sum && bad_sum) || (rows && bad_rows) || bad_idle ||
                                 (vec_load &&
                                  bad_vec(lane_sum, rows, lanes, lane_count, out_count, b_base, stride_b)) ||
                                 (vec_store && !lane_sum && bad_runs(LANE, DRAIN_MASK, plain_cols, o_base, stride_o)) ||
                                 (pre_vec_load && bad_vec(pre_lane_sum, pre_rows, pre_lanes,
                                                          pre_counts[CNT_W*LANE +: CNT_W],
                                                          pre_counts[CNT_W*OUT_LANE +: CNT_W], pre_b_base,
                                                          pre_stride_b)) ||
                                 (pre_lane_sum && sum_shift(pre_counts[CNT_W*LANE +: CNT_W]) == 4'd0) ||
                                 (pre_rows && (sum_shift(pre_counts[CNT_W*OUT_LANE +: CNT_W]) == 4'd0 ||
                                               {24'd0, pre_lanes} != LANES_U));
  wire signed [6:0] shift_s = shift;
  wire [3:0] err_d = (shift_s < -7'sd16 || shift_s > 7'sd47)          ? CT_ERR_SHIFT :
                     (out_w < 6'd2 || {26'd0, out_w} > OUT_W_U)   ? CT_ERR_OUT_W :
                     zero_count                                       ? CT_ERR_COUNT :
                     bad_lanes                                        ? CT_ERR_LANES : ERR_NONE;

  // The form of the op, registered when the op is taken (a start while busy is not): the compute nest's
  // configuration, the load nest's start, the b port's select and lane 0's operand select read a flip-flop, not the
  // descriptor's compare; so do the drain's width and its beats per group.
  wire       lane_form_q;
  wire       store_q;        // a wide drain
  wire       sum_q;          // a lane sum
  wire       run_q;          // a lane sum or rows: the lanes take words of a's run of R words
  wire       lane2_q;        // loop OUT_LANE is a lane loop too (a lane sum with output lanes, or rows)
  wire [3:0] sum_sh_q;       // log2 R of a lane sum (the trees' stages) or of rows
  wire [7:0] drain_beats_q;  // cycles a group takes to leave the drain
  wire [7:0] row_beats_q;    // of them, the beats of one row (rows), else all
  wire       idle_q;         // rows with idle rows
  wire [7:0] live_beats_q;   // drain_beats_q of a group in the chunk loop's last index (its idle rows left out)
  wire [3:0] run_n1_q;       // a's run: R - 1 (a_rd_n1)
  wire [3:0] live_n1_q;      // the run of a group in the chunk loop's last index: R - idle_rows - 1
  generate
    if (LANES > 1) begin : g_form_q
      reg       form_q;
      reg       wide_q;
      reg       lsum_q;
      reg       lrun_q;
      reg       llane2_q;
      reg [3:0] lsum_sh_q;
      reg [7:0] beats_q;
      reg [7:0] rbeats_q;
      reg       lidle_q;
      reg [7:0] lbeats_q;
      reg [3:0] rn1_q;
      reg [3:0] ln1_q;
      wire [7:0] out_lanes = lane_sum ? lanes >> sum_sh : lanes;  // the elements a group drains
      wire [7:0] row_lanes = (SUM_SH_MAX > 0 && rows) ? lane_count[7:0] : out_lanes;  // of them, one row's
      wire [7:0] live      = out_lanes - {4'd0, idle_rows} * lane_count[7:0];  // of them, those of live rows
      wire [3:0] run_n1    = (rows ? out_count[3:0] : lane_count[3:0]) - 4'd1;  // R - 1 (R = 16: 0 - 1)
      wire       wide      = DRAIN > 1 && vec_store;
      always @(posedge clk) begin
        if (start && !busy) begin
          form_q    <= lane_form;
          wide_q    <= wide;
          lidle_q   <= SUM_SH_MAX > 0 && rows && idle_rows != 4'd0;
          lbeats_q  <= wide ? live >> DRAIN_SH : live;
          rn1_q     <= run_n1;
          ln1_q     <= run_n1 - idle_rows;
          lsum_q    <= SUM_SH_MAX > 0 && lane_sum;
          lrun_q    <= SUM_SH_MAX > 0 && (lane_sum || rows);
          llane2_q  <= lane2;
          lsum_sh_q <= rows ? row_sh : sum_sh;
          beats_q   <= wide ? out_lanes >> DRAIN_SH : out_lanes;
          rbeats_q  <= wide ? row_lanes >> DRAIN_SH : row_lanes;
        end
      end
      assign lane_form_q   = form_q;
      assign store_q       = wide_q;
      assign sum_q         = lsum_q;
      assign run_q         = lrun_q;
      assign lane2_q       = llane2_q;
      assign sum_sh_q      = lsum_sh_q;
      assign drain_beats_q = beats_q;
      assign row_beats_q   = rbeats_q;
      assign idle_q        = lidle_q;
      assign live_beats_q  = lbeats_q;
      assign run_n1_q      = rn1_q;
      assign live_n1_q     = ln1_q;
    end else begin : g_form_direct
      assign lane_form_q   = 1'b0;
      assign store_q       = 1'b0;
      assign sum_q         = 1'b0;
      assign run_q         = 1'b0;
      assign lane2_q       = 1'b0;
      assign sum_sh_q      = 4'd0;
      assign drain_beats_q = 8'd1;
      assign row_beats_q   = 8'd1;
      assign idle_q        = 1'b0;
      assign live_beats_q  = 8'd1;
      assign run_n1_q      = 4'd0;
      assign live_n1_q     = 4'd0;
    end
  endgenerate

  wire      fin_q;  // the cycle after the last element's write, its statistics complete (tt_writeback)
  wire      run;
  wire [3:0] err_q;

  tt_op_ctrl u_ctrl (
    .clk        (clk),
    .rst        (rst),
    .start      (start),
    .err_d      (err_d),
    .fin        (fin_q),
    .run        (run),
    .busy       (busy),
    .done       (done),
    .error_code (err_q)
  );

  // ---- the compute nest: without the lane loop in the lane form, where b walks the buffer word. Its counts and b
  // strides are registered when the op is taken (from the descriptor, like the form), so the nest's adders start from
  // flip-flops, not from the form's multiplexers. ----
  reg [NLOOPS*CNT_W-1:0]  nest_counts_d;
  reg [NLOOPS*ADDR_W-1:0] nest_sb_d;
  reg [NLOOPS*CNT_W-1:0]  nest_counts;
  reg [NLOOPS*ADDR_W-1:0] nest_sb;
  integer l;
  always @* begin
    for (l = 0; l < NLOOPS; l = l + 1) begin
      nest_counts_d[CNT_W*l +: CNT_W] = ((l == LANE && lane_form) || (l == OUT_LANE && lane2)) ?
                                        {{(CNT_W-1){1'b0}}, 1'b1} : counts[CNT_W*l +: CNT_W];
      nest_sb_d[ADDR_W*l +: ADDR_W] = lane_form ? {{(ADDR_W-BUF_W){1'b0}}, stride_buf[BUF_W*l +: BUF_W]} :
                                      stride_b[ADDR_W*l +: ADDR_W];
    end
  end
  always @(posedge clk) begin
    if (start && !busy) begin
      nest_counts <= nest_counts_d;
      nest_sb     <= nest_sb_d;
    end
  end

  wire              walk_valid;
  wire              walk_ready;
  wire [ADDR_W-1:0] walk_addr_a;
  wire [ADDR_W-1:0] walk_addr_b;
  wire [ADDR_W-1:0] walk_addr_o;
  wire              walk_first;
  wire              walk_last_red;
  wire              walk_last;
  wire              unused_walk_done;

  tt_loop_addr #(
    .NLOOPS (NLOOPS),
    .NRED   (NRED),
    .CNT_W  (CNT_W),
    .ADDR_W (ADDR_W)
  ) u_loop (
    .clk       (clk),
    .rst       (rst),
    .start     (run),
    .counts    (nest_counts),
    .stride_a  (stride_a),
    .stride_b  (nest_sb),
    .stride_o  (stride_o),
    .base_a    (a_base),
    .base_b    (lane_form_q ? {ADDR_W{1'b0}} : b_base),
    .base_o    (o_base),
    .valid     (walk_valid),
    .ready     (walk_ready),
    .addr_a    (walk_addr_a),
    .addr_b    (walk_addr_b),
    .addr_o    (walk_addr_o),
    .first_red (walk_first),
    .last_red  (walk_last_red),
    .last      (walk_last),
    .done      (unused_walk_done)
  );

  // The beats reach the issue through a register slice: the walk's step, which enables its ~800 index and mark
  // registers, then waits on a flip-flop, not on the issue's checks below (the buffer's compare, the gap). One
  // cycle of latency (golden/isa/timing.py group_starts).
  wire              la_valid;
  wire              la_ready;
  wire [ADDR_W-1:0] la_addr_a;
  wire [ADDR_W-1:0] la_addr_b;
  wire [ADDR_W-1:0] la_addr_o;
  wire              la_first;
  wire              la_last_red;
  wire              la_last;
  tt_skid #(
    .WIDTH (3 * ADDR_W + 3)
  ) u_beat_slice (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (walk_valid),
    .in_ready  (walk_ready),
    .in_data   ({walk_addr_a, walk_addr_b, walk_addr_o, walk_first, walk_last_red, walk_last}),
    .out_valid (la_valid),
    .out_ready (la_ready),
    .out_data  ({la_addr_a, la_addr_b, la_addr_o, la_first, la_last_red, la_last})
  );

  // A group (the first beat of a reduction) starts at least drain_beats_q cycles after the previous one, so its sums
  // reach the drain after the previous group's have left it; in the lane form also not before the buffer words it
  // reads are loaded (buf_ready, below).
  reg [7:0] gap_q;
  wire      buf_ready;
  wire      issue = la_valid && la_ready;
  assign la_ready = !la_first || (gap_q == 8'd0 && buf_ready);
  always @(posedge clk) begin
    if (rst || run) begin
      gap_q <= 8'd0;
    end else if (issue && la_first) begin
      gap_q <= drain_beats_q - 8'd1;
    end else if (gap_q != 8'd0) begin
      gap_q <= gap_q - 8'd1;
    end
  end

  // Rows with idle rows: the groups left until the chunk loop's last index (the innermost loop the compute nest
  // walks, so one step a group), of the group in issue. That group's idle rows read nothing and drain nothing.
  localparam integer CHUNK = (NOUT > 2) ? NRED + 2 : NRED;
  wire [CNT_W-1:0] chunk_count = counts[CNT_W*CHUNK +: CNT_W];
  reg  [CNT_W-1:0] chunk_left_q;
  always @(posedge clk) begin
    if (rst || run) begin
      chunk_left_q <= chunk_count - 1'b1;
    end else if (issue && la_last_red) begin
      chunk_left_q <= (chunk_left_q == {CNT_W{1'b0}}) ? chunk_count - 1'b1 : chunk_left_q - 1'b1;
    end
  end
  wire short_grp = idle_q && chunk_left_q == {CNT_W{1'b0}};

  // ---- beat tags through the memory latency: the flags reset, the address not (it counts only with valid) ----
  wire [TAG_W-1:0] tag_issue = {la_addr_o, short_grp, la_last, la_last_red, la_first, issue};
  wire [TAG_W-1:0] tag_m;
  tt_delay #(
    .WIDTH (5),
    .DEPTH (MEM_LAT),
    .RESET (1)
  ) u_mem_tag (
    .clk (clk),
    .rst (rst),
    .d   (tag_issue[4:0]),
    .q   (tag_m[4:0])
  );
  tt_delay #(
    .WIDTH (ADDR_W),
    .DEPTH (MEM_LAT)
  ) u_mem_addr (
    .clk (clk),
    .rst (rst),
    .d   (tag_issue[TAG_W-1:5]),
    .q   (tag_m[TAG_W-1:5])
  );
  wire              m_valid    = tag_m[0];  // a beat's operands arrive
  wire              m_first    = tag_m[1];
  wire              m_last_red = tag_m[2];
  wire              m_last     = tag_m[3];
  wire              m_short    = tag_m[4];
  wire [ADDR_W-1:0] m_addr_o   = tag_m[TAG_W-1:5];

  assign a_rd_en   = issue;
  assign a_rd_addr = la_addr_a;
  assign a_rd_n1   = !(issue && run_q) ? 4'd0 : short_grp ? live_n1_q : run_n1_q;

  // ---- lane buffers (lane form): loaded through the b port while the compute nest runs ----
  wire [B_W*LANES-1:0] mac_b;
  generate
    if (LANES > 1) begin : g_lanes
      // The load nest: the lane loop and the loops b depends on (the others count once), a beat a cycle; its a
      // walks the lane index (stride 1 on the lane loop), its o the buffer word. It walks the op's own b from `run`
      // (not for a preloaded op: that walk is already running or done), then, if the op carries a preload, the
      // next op's b into the other set. A walk's configuration sits in registers, so the walk can outlive the op:
      // the own walk's is taken with the op, the preload's from the descriptor when the walk before it ends
      // (pre_go). pre_go comes before the op's done (the op's compute waits for that walk's last slice), and the
      // descriptor is stable from start until done, so the preload's fields need no registers of their own.
      reg [NLOOPS*CNT_W-1:0]  ld_counts_q;
      reg [NLOOPS*CNT_W-1:0]  load_counts;
      reg [NLOOPS*ADDR_W-1:0] load_sa;
      reg [NLOOPS*ADDR_W-1:0] load_sb;
      reg [NLOOPS*ADDR_W-1:0] load_so;
      reg [NLOOPS*ADDR_W-1:0] ld_sb_q;
      reg [NLOOPS*BUF_W-1:0]  ld_sbuf_q;
      reg [ADDR_W-1:0]        ld_base_q;
      reg                     ld_vec_q;       // the walk is a vector load
      reg                     ld_outs_q;      // a lane sum's walk with output lanes: loop OUT_LANE is a lane loop
      reg                     ld_vout_q;      // its vector load runs along OUT_LANE
      reg                     ld_vsum_q;      // a lane sum's vector load along its sum loop: R = VEC lanes a beat
      reg [LANE_IW:0]         ld_lane_step_q;  // the lane index step of loop LANE (in vectors of VEC in a vector load)
      reg [LANE_IW-1:0]       ld_last_lane_q;  // the lane (vector) index of a slice's last beat
      reg [3:0]               ld_row_sh_q;    // rows: log2 R (each word into R lanes); 0 otherwise
      reg                     own_walk_q;    // the op walks its own b from run
      reg                     pre_pending_q;  // a preload waits for the current walk's end
      reg                     load_start_q;   // the load nest restarts: the own walk from run, or the preload's
      reg                     lset_q;         // the set the load nest writes
      reg                     cset_q;         // the set the compute nest reads
      wire                    take = start && !busy;
      wire                    own_start = run && own_walk_q;
      wire                    ld_valid;
      wire                    ld_last;
      wire                    ld_done;
      wire                    pre_go = pre_pending_q && !own_start && ((ld_valid && ld_last) || ld_done);
      // The walk configuration to take: the preload's while one is pending (pre_go), else the op's own (taken with
      // the op: no preload is pending then, since a pending preload goes before its op's done). The select is a
      // flip-flop, not `take`, which comes from the sequencer's state through the busy logic.
      wire [NLOOPS*CNT_W-1:0]  walk_counts = pre_pending_q ? pre_counts : counts;
      wire [NLOOPS*ADDR_W-1:0] walk_sb     = pre_pending_q ? pre_stride_b : stride_b;
      wire [7:0]               walk_lanes  = pre_pending_q ? pre_lanes : lanes;
      wire                     walk_vec    = VEC > 1 && (pre_pending_q ? pre_vec_load : vec_load);
      // A lane sum's walk: lane (c, r) is lane c + S r, S = LANES / R, r the index of loop LANE (the sum loop), c that
      // of loop OUT_LANE (with output lanes). A vector load with R = VEC runs along the sum loop: a beat is column c's
      // R lanes (word r into lane c + S r), the walk's lane index c. With R < VEC it runs along OUT_LANE, whose rows of
      // lanes are aligned (S a multiple of VEC).
      // Rows: lane (c, r) is lane c + L r; the walk numbers the columns c, and each word goes to every row's lane.
      wire                     walk_sum    = SUM_SH_MAX > 0 && (pre_pending_q ? pre_lane_sum : lane_sum);
      wire                     walk_rows   = SUM_SH_MAX > 0 && (pre_pending_q ? pre_rows : rows);
      wire [3:0]               walk_sh     = walk_sum  ? sum_shift(walk_counts[CNT_W*LANE +: CNT_W]) :
                                             walk_rows ? sum_shift(walk_counts[CNT_W*OUT_LANE +: CNT_W]) : 4'd0;
      wire [LANE_IW:0]         walk_s      = LANES_U[LANE_IW:0] >> walk_sh;  // S; 1 for a lane form's walk
      wire                     walk_outs   = walk_sum && (walk_lanes >> walk_sh) != 8'd1;
      wire [8:0]               walk_outl9  = {1'b0, walk_lanes} >> walk_sh;
      wire [LANE_IW:0]         walk_outl   = walk_outl9[LANE_IW:0];  // the output lanes L
      wire                     walk_vsum   = VSUM && walk_vec && walk_sum && {28'd0, walk_sh} == VEC_SH;
      wire [LANE_IW:0]         slice_last  = walk_outl - 1'b1 + ((walk_sum && !walk_vsum) ? LANES_U[LANE_IW:0] - walk_s :
                                                                                            {(LANE_IW+1){1'b0}});
      integer ll;
      always @(posedge clk) begin
        if ((take && lane_form && !preloaded) || pre_go) begin
          for (ll = 0; ll < NLOOPS; ll = ll + 1) begin
            ld_counts_q[CNT_W*ll +: CNT_W] <= walk_count(ll, walk_counts, walk_sb);
          end
          ld_sb_q    <= walk_sb;
          ld_sbuf_q  <= pre_pending_q ? pre_stride_buf : stride_buf;
          ld_base_q  <= pre_pending_q ? pre_b_base : b_base;
          ld_vec_q   <= walk_vec;
          ld_outs_q  <= walk_outs;
          ld_row_sh_q <= walk_rows ? walk_sh : 4'd0;
          ld_vout_q  <= walk_vec && walk_outs && !walk_vsum;
          ld_vsum_q  <= walk_vsum;
          ld_lane_step_q <= walk_sum ? walk_s >> ((walk_vec && walk_outs) ? VEC_SH : 0) : {{LANE_IW{1'b0}}, 1'b1};
          ld_last_lane_q <= slice_last[LANE_IW-1:0] >> ((walk_vec && !walk_vsum) ? VEC_SH : 0);
        end
      end
      always @(posedge clk) begin
        if (rst) begin
          own_walk_q    <= 1'b0;
          pre_pending_q <= 1'b0;
          load_start_q  <= 1'b0;
          lset_q        <= 1'b0;
          cset_q        <= 1'b0;
        end else begin
          // own_start, a cycle early: run (tt_op_ctrl) follows a take of a legal op, and own_walk_q is loaded with
          // that take; the preload's walk starts the cycle after pre_go
          load_start_q <= (take && lane_form && !preloaded && err_d == ERR_NONE) || pre_go;
          if (take) begin
            own_walk_q    <= lane_form && !preloaded;
            pre_pending_q <= lane_form && pre_lanes != 8'd0 && err_d == ERR_NONE;  // an illegal op loads nothing
            cset_q        <= lset_q;
          end else if (pre_go) begin
            pre_pending_q <= 1'b0;
            lset_q        <= !lset_q;
          end
        end
      end
      wire [31:0] vec_loop = ld_vout_q ? OUT_LANE : LANE;  // the loop a vector load steps VEC lanes a beat
      always @* begin
        for (ll = 0; ll < NLOOPS; ll = ll + 1) begin
          load_sa[ADDR_W*ll +: ADDR_W] = (ll == LANE) ? {{(ADDR_W-LANE_IW-1){1'b0}}, ld_lane_step_q} :
                                         (ll == OUT_LANE && ld_outs_q) ? {{(ADDR_W-1){1'b0}}, 1'b1} : {ADDR_W{1'b0}};
          // a vector load steps its loop VEC lanes (VEC words of b) a beat; applied behind the walk's registers, off
          // the paths from the descriptor
          load_counts[CNT_W*ll +: CNT_W] = ld_counts_q[CNT_W*ll +: CNT_W] >>
                                           ((ll == vec_loop && ld_vec_q) ? VEC_SH : 0);
          load_sb[ADDR_W*ll +: ADDR_W] = (ll == vec_loop && ld_vec_q) ? VEC_STEP : ld_sb_q[ADDR_W*ll +: ADDR_W];
          load_so[ADDR_W*ll +: ADDR_W] = {{(ADDR_W-BUF_W){1'b0}}, ld_sbuf_q[BUF_W*ll +: BUF_W]};
        end
      end

      wire [ADDR_W-1:0] ld_lane;
      wire [ADDR_W-1:0] ld_addr_b;
      wire [ADDR_W-1:0] ld_word;
      wire              ld_last_red;
      wire              unused_ld_first;
      tt_loop_addr #(
        .NLOOPS (NLOOPS),
        .NRED   (NRED),
        .CNT_W  (CNT_W),
        .ADDR_W (ADDR_W),
        .A_AW   (LANE_IW),  // the lane index
        .O_AW   (BUF_W)     // the buffer word
      ) u_load (
        .clk       (clk),
        .rst       (rst),
        .start     (load_start_q),  // restarts every index and mark register of the walk: no gate in front
        .counts    (load_counts),
        .stride_a  (load_sa),
        .stride_b  (load_sb),
        .stride_o  (load_so),
        .base_a    ({ADDR_W{1'b0}}),
        .base_b    (ld_base_q),
        .base_o    ({ADDR_W{1'b0}}),
        .valid     (ld_valid),
        .ready     (1'b1),
        .addr_a    (ld_lane),
        .addr_b    (ld_addr_b),
        .addr_o    (ld_word),
        .first_red (unused_ld_first),
        .last_red  (ld_last_red),
        .last      (ld_last),
        .done      (ld_done)
      );
      assign b_rd_en   = lane_form_q ? ld_valid : issue;
      assign b_rd_addr = lane_form_q ? ld_addr_b : la_addr_b;
      assign b_rd_n1   = (lane_form_q && ld_valid && ld_vec_q) ? VEC_N1 : 4'd0;

      // A load beat's set, lane (VEC lanes' group in a vector load) and buffer word wait MEM_LAT cycles for b's word.
      // The beat that ends a slice (the last lane's last word of one index of the outer buffer loops: the buffer's
      // words below it are then in every lane; the last lane has the highest index) sets its set's loaded count. A
      // walk's start clears its set's count and flips the set's generation, so the tags of an earlier walk into that
      // set still in the delay line count no more. The delay's last stage is copied per group of LD_GROUP lanes
      // (whole pairs), as the drain's controls are: one tag net to every lane's buffer write spans the whole device
      // on a wide engine. (* keep *): yosys would merge the identical flip-flops back into one.
      localparam integer LD_GROUP = 8;
      localparam integer LD_NGROUPS = (LANES + LD_GROUP - 1) / LD_GROUP;
      localparam integer LT_W = LANE_IW + 7;  // a group's {row_sh, vec, vsum, lane, valid}
      reg [1:0]         gen_q;
      wire              slice_end = ld_last_red && ld_lane[LANE_IW-1:0] == ld_last_lane_q;
      wire [LANE_IW+BUF_W+9:0] ld_tag = {ld_row_sh_q, lset_q, gen_q[lset_q], ld_vec_q, ld_vsum_q, ld_lane[LANE_IW-1:0],
                                        ld_word[BUF_W-1:0], ld_valid && slice_end, ld_valid};
      wire [3:0]        p_row_sh;  // the tag a cycle before its word arrives
      wire              p_set;
      wire              p_gen;
      wire              p_vec;
      wire              p_vsum;
      wire [LANE_IW-1:0] p_lane;
      wire [BUF_W-1:0]  p_word;
      wire              p_slice_end;
      wire              p_valid;
      if (MEM_LAT > 1) begin : g_tag_pre
        tt_delay #(
          .WIDTH (2),
          .DEPTH (MEM_LAT - 1),
          .RESET (1)
        ) u_load_tag (
          .clk (clk),
          .rst (rst),
          .d   (ld_tag[1:0]),
          .q   ({p_slice_end, p_valid})
        );
        tt_delay #(
          .WIDTH (LANE_IW + BUF_W + 8),
          .DEPTH (MEM_LAT - 1)
        ) u_load_fields (
          .clk (clk),
          .rst (rst),
          .d   (ld_tag[LANE_IW+BUF_W+9:2]),
          .q   ({p_row_sh, p_set, p_gen, p_vec, p_vsum, p_lane, p_word})
        );
      end else begin : g_tag_now
        assign {p_row_sh, p_set, p_gen, p_vec, p_vsum, p_lane, p_word, p_slice_end, p_valid} = ld_tag;
      end
      reg  [BUF_W+2:0]  count_tag_q;  // the last stage's {set, gen, word, slice end}, for the loaded counts
      wire              w_slice_end;
      wire              w_set;
      wire              w_gen;
      wire [BUF_W-1:0]  w_word;
      always @(posedge clk) begin
        count_tag_q <= {p_set, p_gen, p_word, !rst && p_slice_end};
      end
      assign {w_set, w_gen, w_word, w_slice_end} = count_tag_q;
      wire [LT_W*LD_NGROUPS-1:0]       grp_tag;      // each group's copy of the lane fields
      wire [(BUF_AW+1)*LD_NGROUPS-1:0] grp_wr_addr;  // and of the buffer word written, {set, word}
      genvar gt;
      for (gt = 0; gt < LD_NGROUPS; gt = gt + 1) begin : g_ld_group
        reg [LT_W-1:0]   tag_q;
        reg [BUF_AW:0]   wr_addr_q;
        (* keep *)
        always @(posedge clk) begin
          tag_q     <= {p_row_sh, p_vec, p_vsum, p_lane, !rst && p_valid};
          wr_addr_q <= {p_set, p_word[BUF_AW-1:0]};
        end
        assign grp_tag[LT_W*gt +: LT_W] = tag_q;
        assign grp_wr_addr[(BUF_AW+1)*gt +: BUF_AW+1] = wr_addr_q;
      end
      localparam integer LD_W = BUF_W + 1;
      reg [2*LD_W-1:0] loaded_q;   // buffer words loaded into every lane, per set (set s in [LD_W*s +: LD_W])
      reg [2*LD_W-1:0] loaded_d;
      reg [1:0]        gen_d;
      reg [LD_W-1:0]   cloaded_q;  // the compute set's count in a register of its own: buf_ready's compare
                                   // starts from a flip-flop, not from a set select
      wire             clear_set = own_start ? lset_q : !lset_q;
      wire             cset_d = rst ? 1'b0 : (take ? lset_q : cset_q);  // cset_q's next value
      integer          st;
      always @* begin
        loaded_d = loaded_q;
        gen_d    = gen_q;
        for (st = 0; st < 2; st = st + 1) begin
          if (rst) begin
            loaded_d[LD_W*st +: LD_W] = {LD_W{1'b0}};
            gen_d[st]                 = 1'b0;
          end else if ((own_start || pre_go) && clear_set == st[0]) begin
            loaded_d[LD_W*st +: LD_W] = {LD_W{1'b0}};
            gen_d[st]                 = !gen_q[st];
          end else if (w_slice_end && w_set == st[0] && w_gen == gen_q[st]) begin
            loaded_d[LD_W*st +: LD_W] = {1'b0, w_word} + 1'b1;
          end
        end
      end
      always @(posedge clk) begin
        loaded_q  <= loaded_d;
        gen_q     <= gen_d;
        cloaded_q <= loaded_d[LD_W*cset_d +: LD_W];
      end
      // A group's words are one slice (the reduction's buffer loops are the innermost), so its first word
      // being loaded means all are.
      assign buf_ready = !lane_form_q || {1'b0, la_addr_b[BUF_W-1:0]} < cloaded_q;

      // Compute: the buffer word is read MEM_LAT - 1 - BUF_OUT_REG cycles after issue, so its data meets a's.
      // With MEM_LAT >= 2 the buffers have an output register: the block RAM's slow clock-to-out then does not
      // run into the multipliers.
      localparam integer BUF_OUT_REG = (MEM_LAT >= 2) ? 1 : 0;
      localparam integer BUF_RD_DELAY = MEM_LAT - 1 - BUF_OUT_REG;
      wire [BUF_AW:0]   buf_rd_addr;  // {set, word}
      wire              buf_rd_en;
      if (BUF_RD_DELAY > 0) begin : g_buf_delay
        tt_delay #(
          .WIDTH (BUF_AW + 2),
          .DEPTH (BUF_RD_DELAY),
          .RESET (1)
        ) u_buf_rd (
          .clk (clk),
          .rst (rst),
          .d   ({cset_q, la_addr_b[BUF_AW-1:0], issue && lane_form_q}),
          .q   ({buf_rd_addr, buf_rd_en})
        );
      end else begin : g_buf_now
        assign buf_rd_addr = {cset_q, la_addr_b[BUF_AW-1:0]};
        assign buf_rd_en   = issue && lane_form_q;
      end
      wire [LANES-1:0]     buf_take;   // the lanes whose buffers a load beat writes
      wire [B_W*LANES-1:0] buf_wdata;  // each lane's word of the beat
      wire [B_W*LANES-1:0] buf_rdata;  // each lane's buffer word read
      wire [BUF_AW:0]      buf_wr_addr = {w_set, w_word[BUF_AW-1:0]};  // the pairs' copies' value
      genvar g;
      genvar gr;
      for (g = 0; g < LANES; g = g + 1) begin : g_buf
        wire [3:0]         w_row_sh;
        wire               w_vec;
        wire               w_vsum;
        wire [LANE_IW-1:0] w_lane;
        wire               w_valid;
        assign {w_row_sh, w_vec, w_vsum, w_lane, w_valid} = grp_tag[LT_W*(g / LD_GROUP) +: LT_W];
        // the lane's column: the lane itself, or in rows of 2^s lanes c of c + (LANES >> s) r
        wire [LANE_IW*(SUM_SH_MAX+1)-1:0] cols;
        localparam [31:0] LANE_G = g;
        assign cols[LANE_IW-1:0] = LANE_G[LANE_IW-1:0];
        for (gr = 1; gr <= SUM_SH_MAX; gr = gr + 1) begin : g_rows
          localparam [31:0] COL = g % (LANES >> gr);
          assign cols[LANE_IW*gr +: LANE_IW] = COL[LANE_IW-1:0];
        end
        wire [LANE_IW-1:0] col = cols[LANE_IW*w_row_sh +: LANE_IW];
        // a vector load along a sum loop of R = VEC: lane c + S r (S = LANES / VEC) takes word r of column c's beat
        localparam [31:0] VSUM_COL = VSUM ? g % (LANES / VEC) : 0;
        localparam [31:0] VSUM_WORD = VSUM ? g / (LANES / VEC) : 0;
        wire take_word = w_vsum ? w_lane == VSUM_COL[LANE_IW-1:0] : w_lane == (w_vec ? col >> VEC_SH : col);
        assign buf_take[g] = w_valid && take_word;
        assign buf_wdata[B_W*g +: B_W] = w_vsum ? b_rd_vec_data[B_W*VSUM_WORD +: B_W] :
                                         w_vec ? b_rd_vec_data[B_W*(g % VEC) +: B_W] : b_rd_data;
        wire [B_W-1:0] buf_data = buf_rdata[B_W*g +: B_W];
        if (g == 0) begin : g_lane0  // the direct form's single lane takes b from the port
          assign mac_b[B_W-1:0] = lane_form_q ? buf_data : b_rd_data;
        end else begin : g_lane_n
          assign mac_b[B_W*g +: B_W] = buf_data;
        end
      end
      // Lanes 2k and 2k + 1 share a memory of two parts: every lane reads its buffer at the same word, so a pair's
      // buffers fit one block RAM where the part packs two (tt_prim_ram: ECP5's 36-bit shape).
      genvar gp;
      for (gp = 0; gp < (LANES + 1) / 2; gp = gp + 1) begin : g_pair
        localparam integer N = (2 * gp + 1 < LANES) ? 2 : 1;  // lanes in the pair (the last of an odd count alone)
        tt_prim_ram #(
          .WIDTH   (N * B_W),
          .DEPTH   ((PRELOAD != 0) ? (1 << BUF_AW) + BUF_DEPTH : BUF_DEPTH),  // {set, word}; one set: set 0
          .AW      (BUF_AW + 1),
          .OUT_REG (BUF_OUT_REG),
          .PARTS   (N),
          .TECH    (TECH)
        ) u_buf (
          .clk     (clk),
          .wr_en   (|buf_take[2*gp +: N]),
          .wr_part (buf_take[2*gp +: N]),
          .wr_addr (grp_wr_addr[(BUF_AW+1)*(2*gp / LD_GROUP) +: BUF_AW+1]),
          .wr_data (buf_wdata[B_W*2*gp +: N*B_W]),
          .rd_en   (buf_rd_en),
          .rd_addr (buf_rd_addr),
          .rd_data (buf_rdata[B_W*2*gp +: N*B_W])
        );
      end
`ifndef SYNTHESIS
      // the buffers' no_rw_check premise (tt_prim_ram), checked in every simulation: a load never writes the word the
      // compute reads in that cycle (it loads the other set, or slices the compute does not read yet). Only once a
      // reset has ended: before it, the simulator's random initial values drive the buffers.
      /* verilator coverage_off */
      reg reset_seen_q;
      initial reset_seen_q = 1'b0;
      always @(posedge clk) begin
        reset_seen_q <= reset_seen_q || rst;
        if (reset_seen_q && !rst && |buf_take && buf_rd_en && buf_wr_addr == buf_rd_addr) begin
          $display("ERROR: tt_contract %m: buffer word %0d is read in the cycle it is written", buf_rd_addr);
          $finish;
        end
      end
      /* verilator coverage_on */
`endif
      wire unused_buf_addr = ^{la_addr_b, ld_word, ld_lane, slice_last[LANE_IW], walk_outl9};
    end else begin : g_one_lane
      assign mac_b     = b_rd_data;
      assign b_rd_en   = issue;
      assign b_rd_addr = la_addr_b;
      assign b_rd_n1   = 4'd0;
      assign buf_ready = 1'b1;
      wire unused_buf = ^{stride_buf, preloaded, pre_lanes, pre_b_base, pre_counts, pre_stride_b, pre_stride_buf,
                          b_rd_vec_data, pre_lane_sum, pre_rows};
    end
  endgenerate

  // ---- MAC lanes: the operands arrive MEM_LAT cycles after their addresses; in a lane sum lane c + S r (S = LANES /
  // R) takes word r of a's run of R words, which starts at the beat's address (rows: lane c + L r the same);
  // otherwise every lane takes a's one word ----
  reg [A_W*LANES-1:0] mac_a;
  generate
    if (SUM_SH_MAX > 0) begin : g_sum_a
      wire [VEC_SH-1:0] run_m;  // the run's first word in the row of the beat whose operands arrive
      tt_delay #(
        .WIDTH (VEC_SH),
        .DEPTH (MEM_LAT)
      ) u_run_off (
        .clk (clk),
        .rst (rst),
        .d   (la_addr_a[VEC_SH-1:0]),
        .q   (run_m)
      );
      // The run in order, once for every lane: word r of the run is the row's word run_m + r, wrapping (the bank read
      // the columns before the first one a row further on), so the row rotates by run_m words.
      wire [2*A_W*VEC-1:0] row_twice = {a_rd_vec_data, a_rd_vec_data};
      wire [A_W*VEC-1:0]   run_row = row_twice[A_W*run_m +: A_W*VEC];
      // The operand multiplexers' selects (run_q, sum_sh_q), registered from their next values once per group of
      // A_GROUP lanes, as the drain's controls are: one select net to every lane spans the whole device on a wide
      // engine. (* keep *): yosys would merge the identical flip-flops back into one.
      localparam integer A_GROUP = 8;
      wire       take_op  = start && !busy;
      wire       run_next = take_op ? SUM_SH_MAX > 0 && (lane_sum || rows) : run_q;  // g_form_q's lrun_q
      wire [3:0] sh_next  = take_op ? (rows ? row_sh : sum_sh) : sum_sh_q;          // and lsum_sh_q
      localparam integer A_NGROUPS = (LANES + A_GROUP - 1) / A_GROUP;
      wire [A_NGROUPS-1:0]   a_run_sel;  // each group's run_q
      wire [4*A_NGROUPS-1:0] a_sh_sel;   // and sum_sh_q
      genvar ga;
      for (ga = 0; ga < A_NGROUPS; ga = ga + 1) begin : g_a_group
        reg       sel_run_q;
        reg [3:0] sel_sh_q;
        (* keep *)
        always @(posedge clk) begin
          sel_run_q <= run_next;
          sel_sh_q  <= sh_next;
        end
        assign a_run_sel[ga] = sel_run_q;
        assign a_sh_sel[4*ga +: 4] = sel_sh_q;
      end
      genvar gl;
      genvar gs;
      for (gl = 0; gl < LANES; gl = gl + 1) begin : g_lane_a
        wire [VEC_SH*(SUM_SH_MAX+1)-1:0] run_words;  // the word of the run the lane takes with 2^s sum lanes
        assign run_words[VEC_SH-1:0] = {VEC_SH{1'b0}};
        for (gs = 1; gs <= SUM_SH_MAX; gs = gs + 1) begin : g_stages
          localparam [31:0] RUN_WORD = gl / (LANES >> gs);  // r of lane gl = c + (LANES >> gs) r
          assign run_words[VEC_SH*gs +: VEC_SH] = RUN_WORD[VEC_SH-1:0];
        end
        wire [VEC_SH-1:0] word = run_words[VEC_SH*a_sh_sel[4*(gl/A_GROUP) +: 4] +: VEC_SH];
        always @* begin
          mac_a[A_W*gl +: A_W] = a_run_sel[gl/A_GROUP] ? run_row[A_W*word +: A_W] : a_rd_data;
        end
      end
    end else begin : g_one_a
      always @* begin
        mac_a = {LANES{a_rd_data}};
      end
      wire unused_sum_a = ^{a_rd_vec_data, sum_sh_q};
    end
  endgenerate
  wire [ACC_W*LANES-1:0] acc;
  tt_mac_array #(
    .LANES    (LANES),
    .A_W      (A_W),
    .B_W      (B_W),
    .ACC_W    (ACC_W),
    .PROD_REG (MAC_REG >= 1 ? 1 : 0),
    .IN_REG   (MAC_REG >= 2 ? 1 : 0),
    .TECH     (TECH)
  ) u_mac (
    .clk   (clk),
    .rst   (rst),
    .en    (m_valid),
    .clear (m_first),
    .a     (mac_a),
    .b     (mac_b),
    .acc   (acc)
  );

  // A group's sums are complete in acc MAC_LAT cycles after its last product: the drain takes them then. The tag's
  // last stage is registered here: the drain's per-group copies of its controls load from its next value.
  wire [ADDR_W+2:0] tag_in = {m_addr_o, m_short, m_valid && m_last, m_valid && m_last_red};
  wire [ADDR_W+2:0] tag_next;  // tag_grp of the next cycle
  reg  [ADDR_W+2:0] tag_grp;
  generate
    if (MAC_LAT > 1) begin : g_mac_tag
      tt_delay #(
        .WIDTH (3),
        .DEPTH (MAC_LAT - 1),
        .RESET (1)
      ) u_mac_tag (
        .clk (clk),
        .rst (rst),
        .d   (tag_in[2:0]),
        .q   (tag_next[2:0])
      );
      tt_delay #(
        .WIDTH (ADDR_W),
        .DEPTH (MAC_LAT - 1)
      ) u_mac_addr (
        .clk (clk),
        .rst (rst),
        .d   (tag_in[ADDR_W+2:3]),
        .q   (tag_next[ADDR_W+2:3])
      );
    end else begin : g_mac_tag_direct
      assign tag_next = tag_in;
    end
  endgenerate
  always @(posedge clk) begin
    tag_grp <= {tag_next[ADDR_W+2:3], rst ? 3'b000 : tag_next[2:0]};
  end
  wire              grp_done  = tag_grp[0];
  wire              grp_last  = tag_grp[1];
  wire              grp_short = tag_grp[2];  // in the chunk loop's last index: its idle rows do not drain
  wire [ADDR_W-1:0] grp_addr  = tag_grp[ADDR_W+2:3];

  // A lane sum's group passes the fold trees first: their L sums enter the drain as the group's L elements.
  wire                       sum_valid;
  wire                       sum_valid_next;  // sum_valid of the next cycle
  wire                       sum_last;
  wire [ADDR_W-1:0]          sum_addr;
  wire [ACC_W*LANES-1:0]     sum_acc;  // element c in lane c's place
  generate
    if (SUM_SH_MAX > 0) begin : g_lane_sum
      wire [ACC_W*(LANES/2)-1:0] sums;
      tt_lane_sum #(
        .N      (LANES),
        .STAGES (SUM_SH_MAX),
        .WIDTH  (ACC_W),
        .TAG_W  (ADDR_W + 1)
      ) u_lane_sum (
        .clk       (clk),
        .rst       (rst),
        .stages    (sum_sh_q),
        .in_valid  (grp_done && sum_q),
        .in_tag    ({grp_addr, grp_last}),
        .in_data   (acc),
        .out_valid (sum_valid),
        .out_valid_next (sum_valid_next),
        .out_tag   ({sum_addr, sum_last}),
        .out_sums  (sums)
      );
      assign sum_acc = {{(ACC_W*(LANES-LANES/2)){1'b0}}, sums};
    end else begin : g_no_lane_sum
      assign sum_valid = 1'b0;
      assign sum_valid_next = 1'b0;
      assign sum_last  = 1'b0;
      assign sum_addr  = {ADDR_W{1'b0}};
      assign sum_acc   = {(ACC_W*LANES){1'b0}};
    end
  endgenerate
  wire                  drain_take = sum_q ? sum_valid : grp_done;

  // ---- drain: a group's elements leave one per cycle (DRAIN per cycle in a wide drain), lane 0 first (the nest's
  // order), row by row in rows (each row's first element the rows loop's output stride after the previous row's).
  // The drain register only loads a group or moves on by DRAIN lanes (one multiplexer a bit): a wide beat moves it,
  // a one-element beat takes the element from the lowest DRAIN lanes by a counter and moves it once they are out. ----
  localparam integer RUN_ACC = DRAIN * ACC_W;  // the sums of one drain beat
  reg [ACC_W*LANES-1:0] drain_q;
  reg [7:0]             drain_n_q;    // beats left
  reg [ADDR_W-1:0]      drain_addr_q;
  reg [ADDR_W-1:0]      drain_row_q;   // the address of the row's first element
  reg [7:0]             drain_col_q;   // beats left in the row
  reg                   drain_last_q;  // the group is the op's last
  wire                  emit      = drain_n_q != 8'd0;
  wire                  emit_fin  = emit && drain_last_q && drain_n_q == 8'd1;
  wire [ADDR_W-1:0]     lane_step = stride_o[ADDR_W*((sum_q && lane2_q) ? OUT_LANE : LANE) +: ADDR_W];
  wire                  unused_lane2 = lane2_q;  // with one output loop, OUT_LANE is LANE
  wire [ADDR_W-1:0]     row_step  = stride_o[ADDR_W*OUT_LANE +: ADDR_W];  // rows: the rows loop's
  wire [ADDR_W-1:0]     take_addr = sum_q ? sum_addr : grp_addr;
  wire [ADDR_W-1:0]     run_step  = DRAIN_MASK + 1'b1;  // a wide drain's beat: DRAIN words (the lane loop's stride 1)
  reg [7:0] drain_n_d;
  always @* begin
    if (rst) begin
      drain_n_d = 8'd0;
    end else if (drain_take) begin
      drain_n_d = (grp_short && !sum_q) ? live_beats_q : drain_beats_q;
    end else if (emit) begin
      drain_n_d = drain_n_q - 8'd1;
    end else begin
      drain_n_d = drain_n_q;
    end
  end
  always @(posedge clk) begin
    drain_n_q <= drain_n_d;
  end
  wire             shift_run_next;  // the drain register moves on by DRAIN lanes in the next cycle
  wire [RUN_ACC-1:0] beat_run;   // the beat's elements: the run, or first the one-element beat's element
  generate
    if (DRAIN > 1) begin : g_drain_sub
      reg [DRAIN_SH-1:0] sub_q;  // a one-element beat's lane among the lowest DRAIN
      reg [DRAIN_SH-1:0] sub_d;
      always @* begin
        if (rst || drain_take) begin
          sub_d = {DRAIN_SH{1'b0}};
        end else if (emit && !store_q) begin
          sub_d = sub_q + 1'b1;
        end else begin
          sub_d = sub_q;
        end
      end
      always @(posedge clk) begin
        sub_q <= sub_d;
      end
      // store_q changes only when an op is taken, with no group in the drain
      assign shift_run_next = drain_n_d != 8'd0 && (store_q || sub_d == DRAIN_M1[DRAIN_SH-1:0]);
      assign beat_run   = {drain_q[RUN_ACC-1:ACC_W], store_q ? drain_q[ACC_W-1:0] : drain_q[ACC_W*sub_q +: ACC_W]};
    end else begin : g_drain_one
      assign shift_run_next = drain_n_d != 8'd0;
      assign beat_run   = drain_q[ACC_W-1:0];
    end
  endgenerate

  // The drain register's controls, registered from their next values once per group of DRAIN_GROUP lanes: one take
  // or move net to every sum of a wide engine spans the whole device. The copies' processes are (* keep *), or yosys
  // merges their identical flip-flops back into one.
  localparam integer DRAIN_GROUP   = 8;
  localparam integer DRAIN_NGROUPS = (LANES + DRAIN_GROUP - 1) / DRAIN_GROUP;
  wire              sum_next = (LANES > 1 && start && !busy) ? SUM_SH_MAX > 0 && lane_sum : sum_q;  // g_form_q's
  wire              drain_take_next = !rst && (sum_next ? sum_valid_next : tag_next[0]);
  wire [ACC_W*LANES-1:0] drain_moved = drain_q >> RUN_ACC;
  genvar dg;
  generate
    for (dg = 0; dg < DRAIN_NGROUPS; dg = dg + 1) begin : g_drain_group
      localparam integer LO = ACC_W * DRAIN_GROUP * dg;
      localparam integer W  = ACC_W * ((LANES - DRAIN_GROUP * dg < DRAIN_GROUP) ? LANES - DRAIN_GROUP * dg :
                                       DRAIN_GROUP);
      reg take_q;   // drain_take
      reg sum_sel_q;  // sum_q: the group's lanes take the lane sums
      reg move_q;   // the register moves on by DRAIN lanes
      (* keep *)
      always @(posedge clk) begin
        take_q    <= drain_take_next;
        sum_sel_q <= sum_next;
        move_q    <= shift_run_next;
      end
      always @(posedge clk) begin
        if (take_q) begin
          drain_q[LO +: W] <= sum_sel_q ? sum_acc[LO +: W] : acc[LO +: W];
        end else if (move_q) begin
          drain_q[LO +: W] <= drain_moved[LO +: W];
        end
      end
    end
  endgenerate
  always @(posedge clk) begin
    if (drain_take) begin
      drain_addr_q <= take_addr;
      drain_row_q  <= take_addr;
      drain_col_q  <= row_beats_q;
      drain_last_q <= sum_q ? sum_last : grp_last;
    end else if (emit) begin
      if (SUM_SH_MAX > 0 && drain_col_q == 8'd1) begin  // the row's last beat: the next row (builds with rows)
        drain_addr_q <= drain_row_q + row_step;
        drain_row_q  <= drain_row_q + row_step;
        drain_col_q  <= row_beats_q;
      end else begin
        drain_addr_q <= drain_addr_q + (store_q ? run_step : lane_step);
        drain_col_q  <= drain_col_q - 8'd1;
      end
    end
  end

  // The old word (accumulate; a wide drain's old run, from the row) is read as its element leaves the drain; the
  // element waits for it.
  assign o_rd_en   = emit && accumulate;
  assign o_rd_addr = drain_addr_q;
  assign o_rd_n1   = (emit && accumulate && store_q) ? DRAIN_N1 : 4'd0;

  // The element's valid and last flags are reset; its sums and address are data (no reset fan-out: with 64 lanes
  // they are thousands of flip-flops).
  wire               rq_in_q;
  wire               rq_fin_q;
  wire [ADDR_W-1:0]  rq_addr_q;
  wire [RUN_ACC-1:0] rq_acc;
  tt_delay #(
    .WIDTH (2),
    .DEPTH (MEM_LAT),
    .RESET (1)
  ) u_old_wait_tag (
    .clk (clk),
    .rst (rst),
    .d   ({emit_fin, emit}),
    .q   ({rq_fin_q, rq_in_q})
  );
  tt_delay #(
    .WIDTH (RUN_ACC + ADDR_W),
    .DEPTH (MEM_LAT)
  ) u_old_wait_data (
    .clk (clk),
    .rst (rst),
    .d   ({beat_run, drain_addr_q}),
    .q   ({rq_acc, rq_addr_q})
  );

  // The old words of the element(s) entering the requantiser: one word, or the run of the row it sits in.
  wire [DRAIN*OUT_W-1:0] old_run;
  generate
    if (DRAIN > 1) begin : g_old_run
      localparam integer RUNS_SH = $clog2(VEC) - DRAIN_SH;  // runs per row: 2^RUNS_SH
      wire [DRAIN*OUT_W-1:0] row_run;  // the element's run of the row read
      if (RUNS_SH > 0) begin : g_runs
        wire [RUNS_SH-1:0] run_idx = rq_addr_q[DRAIN_SH +: RUNS_SH];
        assign row_run = o_rd_vec_data[DRAIN*OUT_W*run_idx +: DRAIN*OUT_W];
      end else begin : g_one_run
        assign row_run = o_rd_vec_data;
      end
      assign old_run = store_q ? row_run : {{((DRAIN-1)*OUT_W){1'b0}}, o_rd_data};
    end else begin : g_old_word
      assign old_run = o_rd_data;
      wire unused_old_row = ^o_rd_vec_data;
    end
  endgenerate

  // ---- random stream: one draw per requantised element, STOCHASTIC only (SPEC 2.2): DRAIN a beat in a wide drain ----
  wire [8*DRAIN-1:0] rnd;
  tt_lfsr #(
    .DRAWS (DRAIN)
  ) u_lfsr (
    .clk       (clk),
    .rst       (rst),
    .seed_load (seed_load),
    .seed      (seed),
    .advance   (rq_in_q && mode),
    .leap      (store_q),
    .rnd       (rnd),
    .state     (lfsr_state)
  );

  wire                   rq_valid;
  wire [DRAIN*OUT_W-1:0] rq_y;
  wire [DRAIN-1:0]       rq_sat;
  wire [DRAIN-1:0]       unused_rq_shift_err;  // cannot fire: shifts are checked at start
  tt_requant #(
    .ACC_W (ACC_W),
    .OUT_W (OUT_W),
    .LANES (DRAIN)
  ) u_rq (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (rq_in_q),
    .acc       (rq_acc),
    .shift     ({DRAIN{shift}}),
    .mode      ({DRAIN{mode}}),
    .rnd       (rnd),
    .out_valid (rq_valid),
    .y         (rq_y),
    .sat       (rq_sat),
    .shift_err (unused_rq_shift_err)
  );

  // ---- write back: clamp, saturating accumulate, statistics (shared with the other units) ----
  wire [31:0]      wb_sat_count;
  wire [OUT_W-1:0] wb_maxabs;
  tt_writeback #(
    .ADDR_W    (ADDR_W),
    .OUT_W     (OUT_W),
    .TAG_DELAY (RQ_LAT),
    .OLD_DELAY (RQ_LAT),  // the old word arrives with its element at the requantiser
    .LANES     (DRAIN)
  ) u_writeback (
    .clk        (clk),
    .rst        (rst),
    .clear      (run),
    .tag_fin    (rq_fin_q),
    .tag_addr   (rq_addr_q),
    .in_valid   (rq_valid),
    .wide       (store_q),
    .rq_y       (rq_y),
    .rq_sat     (rq_sat),
    .old_data   (old_run),
    .accumulate (accumulate),
    .rq_w       (out_w),
    .rq_count   (1'b1),
    .negate     (1'b0),
    .out_w      (out_w),
    .wr_en      (o_wr_en),
    .wr_wide    (o_wr_run),
    .wr_addr    (o_wr_addr),
    .wr_data    (o_wr_data),
    .fin        (fin_q),
    .sat_count  (wb_sat_count),
    .maxabs     (wb_maxabs)
  );

  assign error      = err_q != ERR_NONE;
  assign error_code = err_q;
  assign sat_count  = wb_sat_count;
  assign maxabs     = wb_maxabs;

endmodule
`default_nettype wire
