`default_nettype none
// tt_ewise: the element-wise unit (one element per cycle). Executes one element-wise descriptor
// (golden/isa/ewise.py EwiseDesc; SPEC 5.2 AXPBY, 5.3 AXPBY_RELU / RELU_BWD, 5.5 ACC, DERIVE, ZERO, 5.6 MASK and PENALTY)
// bit-exactly. Element i = 0 .. count-1 reads x and z at base + i and writes y at y_base + i:
//   t = A(alpha * x, align_x) + A(b * z, align_z)   A(p, e) = p * 2^e (e >= 0), floor((p + 2^(-e-1)) / 2^-e) (e < 0)
//   y = SAT_y_w(RQ(gate ? t : 0, shift, mode))      ACC: y = SAT_y_w(old y + that)
//   AXPBY_RELU: the word written is max(y, 0) (the bias and the activation in one pass; the statistics are y's)
// The z term is formed by AXPBY and AXPBY_RELU (b = beta) and PENALTY (b = tau_left[r_prev] + tau_right[r_next], 17
// bits: the rank prior's gradient of element (r_prev, m*n, r_next) of a core of shape (r0, mn, r1)), the x term by
// every op but ZERO. gate is 1 except RELU_BWD (z > 0: z is the saved activation h), MASK
// (mask_left[r_prev] != 0 && mask_right[r_next] != 0) and ZERO (0). MASK and PENALTY first read their two bonds'
// tables (the rank state in the data memory: masks or taus, one 16-bit word per slice) on the x port. Every op is this
// one datapath: DERIVE and ACC are RQ(x, shift) with alpha = 1, ZERO is a gate of 0.
// With ADAM = 1 the unit also has Adam's two ops (SPEC 5.5), through five more stages before the multipliers:
//   ADAM_V (x = v, z = g): the z term is beta * z^2 (a squarer ahead of the z multiplier).
//   ADAM_STEP (x = m, z = v, y = w; alpha = lr_t, beta = eps_q >= 1, align_z = F_v): u = max(v, 0) + eps_q, its bit
//   length, the normalised index idx in [64, 256) and the exponent h (golden.semantics.rsqrt_parts), RSQRT[idx] from a
//   192-entry ROM, then the x term is alpha * (m * RSQRT[idx]) and the element's RQ shift is shift + h;
//   delta = SAT_16(RQ(...)) and y = SAT_y_w(old w - delta) (tt_writeback: the first clamp at 16 bits, uncounted,
//   negated, then the accumulate), so only the last clamp counts, as in the golden machine.
// mode 1 (STOCHASTIC) consumes one LFSR draw per element in element order (SPEC 2.2), mode 0 none; the
// saturation count (ACC can count an element twice: the RQ clamp and the clamp of the sum, as in the golden
// machine) and max |word written| (the max register of an adaptive destination, SPEC 4.2) cover the op.
//
// Memories are outside, as in tt_contract: synchronous read ports of fixed latency MEM_LAT (address and
// rd_en in cycle c, data valid in cycle c + MEM_LAT) for x, z (AXPBY, AXPBY_RELU, RELU_BWD) and the old destination word
// (ACC), one write port (taken at the end of the cycle wr_en is high). Read data are signed; a narrow bank
// sign-extends its words (ADAM_STEP reads the old word like ACC). Element n+1 is read before element n is
// written, so a source must be the
// destination itself (in place) or lie apart from it (the lowering checks it); nothing needs forwarding.
// Descriptor ports must be held stable from start until done.
//
// Timing (no stalls): start in cycle 0, the descriptor check in cycle 1 (tt_op_ctrl), element i issued in cycle
// 2 + i, its write on the port in cycle i + MEM_LAT + 11, done (and busy low) from cycle count + MEM_LAT + 12
// until the next start: count + MEM_LAT + 12 cycles per op, 5 more for ADAM_V and ADAM_STEP; MASK and PENALTY
// first read their n table words (cycles 2 .. n + 1) and start their elements n + MEM_LAT cycles later (1 later
// with no table) (golden/isa/timing.py ewise_cycles). Pipeline: issue (tt_loop_addr) -> MEM_LAT -> gate (registered) -> [Adam: u, bit length,
// normalise, ROM, square or m * RSQRT: 5 registered stages] -> two multipliers (registered) -> alignment
// (registered) -> add (registered) -> tt_requant (3) -> tt_writeback: clamp (registered), accumulate and registered
// write, statistics.
//
// Errors are found in the check cycle, before any memory access or draw, so an illegal op leaves every memory
// and the LFSR untouched: done and error rise the cycle after it with error_code (the lowest that applies)
//   1 shift outside -16..47; 2 y_w outside 2..OUT_W, or x_w (x term) / z_w (z term) outside 2..X_W / 2..Z_W;
//   3 count 0, or a MASK / PENALTY with r0 or r1 outside 1..MASK_N or mn 0; 4 an alignment of a formed term
//   below -47 or with width + align > ACC_W - 17 (each term is then below 2^(ACC_W-3), PENALTY's z term below
//   2^(ACC_W-2), and their sum cannot overflow; ACC_W - 16 for an x term alone); 5 unknown opcode (ADAM_V and ADAM_STEP when ADAM = 0, MASK and PENALTY when RANK = 0); 6 ADAM_STEP
//   with eps_q (beta) below 1. Adam's own limits: ADAM_V's z_w at most 16 and ADAM_STEP's x_w at most 17 (code 2,
//   the 18-bit squarer), the x term of ADAM_STEP x_w + 14 bits wide and ADAM_V's z term 2 z_w - 1 (code 4), and
//   ADAM_STEP's element shifts shift + h within -16..47 for h from (-8 - F_v) >> 1 to (max(z_w, 16) + 1 - F_v) >> 1 (code
//   1). golden.isa.ewise.ewise_error is the reference.
//   A start while busy is ignored.
module tt_ewise #(
  parameter integer ADDR_W  = 20,  // element address and count width, 8..32
  parameter integer X_W     = 16,  // x read data width, signed, 2..32
  parameter integer Z_W     = 16,  // z read data width, signed, 2..32
  parameter integer OUT_W   = 16,  // destination word width (the widest y_w), 2..32
  parameter integer ACC_W   = 48,  // accumulator (SPEC 1.2)
  parameter integer MEM_LAT = 1,   // read latency of the memory ports, 1..8
  parameter integer MASK_N  = 16,  // table entries per side (the largest rank), 1..16
  parameter integer ADAM    = 0,   // 1: the Adam ops (OUT_W >= 16)
  parameter integer RANK    = 1    // 1: MASK and PENALTY (rank adaptation), with their table registers
) (
  input  wire               clk,
  input  wire               rst,
  // random stream (SPEC 3): persistent across ops
  input  wire               seed_load,
  input  wire [31:0]        seed,
  output wire [31:0]        lfsr_state,
  // op descriptor (golden.isa.ewise.pack_ewise_ports)
  input  wire               start,
  input  wire [3:0]         opcode,      // 0 AXPBY, 1 ACC, 2 AXPBY_RELU, 3 RELU_BWD, 4 DERIVE, 5 ZERO, 6 MASK, 7 PENALTY,
                                         // 8 ADAM_V, 9 ADAM_STEP (ADAM = 1)
  input  wire [ADDR_W-1:0]  count,
  input  wire [ADDR_W-1:0]  x_base,
  input  wire [ADDR_W-1:0]  z_base,
  input  wire [ADDR_W-1:0]  y_base,
  input  wire [15:0]        alpha,       // signed
  input  wire [15:0]        beta,        // signed (ADAM_STEP: eps_q)
  input  wire [6:0]         align_x,     // signed: left shift >= 0, right shift rounding half up < 0
  input  wire [6:0]         align_z,     // signed (ADAM_STEP: F_v)
  input  wire [6:0]         shift,       // signed, RQ shift
  input  wire               mode,        // 0 nearest, 1 stochastic
  input  wire [5:0]         x_w,         // operand widths (the accumulator bound), destination width
  input  wire [5:0]         z_w,
  input  wire [5:0]         y_w,
  input  wire [4:0]         r0,          // MASK, PENALTY: core shape (r0, mn, r1)
  input  wire [ADDR_W-1:0]  mn,
  input  wire [4:0]         r1,
  input  wire [ADDR_W-1:0]  tab_left,    // MASK, PENALTY: the left bond's table (r0 words: masks or taus)
  input  wire [ADDR_W-1:0]  tab_right,   // ... the right bond's (r1 words)
  input  wire [1:0]         tab_on,      // bit 0: the left table is read, bit 1: the right; absent: live, tau 0
  // status
  output wire               busy,
  output wire               done,
  output wire               error,
  output wire [3:0]         error_code,
  output wire [31:0]        sat_count,   // this op's saturations, saturating (from the cycle after done)
  output wire [OUT_W-1:0]   maxabs,      // this op's max |word written| (from the cycle after done)
  // memory ports
  output wire               x_rd_en,
  output wire [ADDR_W-1:0]  x_rd_addr,
  input  wire [X_W-1:0]     x_rd_data,
  output wire               z_rd_en,
  output wire [ADDR_W-1:0]  z_rd_addr,
  input  wire [Z_W-1:0]     z_rd_data,
  output wire               o_rd_en,
  output wire [ADDR_W-1:0]  o_rd_addr,
  input  wire [OUT_W-1:0]   o_rd_data,
  output wire               o_wr_en,
  output wire [ADDR_W-1:0]  o_wr_addr,
  output wire [OUT_W-1:0]   o_wr_data
);

`include "tt_arch.vh"  // ERR_NONE, EW_ERR_*, EW_OP_*
  localparam integer IDX_W = 4;  // rank index (0..MASK_N-1)
  localparam integer SQ_W = 18;  // the Adam stage's multiplier: 18 x 18 bits signed
  localparam integer S_W = 2 * SQ_W;  // its product: z^2 (ADAM_V) or m * RSQRT (ADAM_STEP)
  localparam integer U_W = ((Z_W > 16) ? Z_W : 16) + 1;  // ADAM_STEP's u = max(v, 0) + eps_q (eps_q < 2^15)
  localparam integer XM_W = (ADAM != 0 && S_W > X_W) ? S_W : X_W;  // the x multiplier's operand: x or m * RSQRT
  localparam integer ZM_W = (ADAM != 0 && S_W > Z_W) ? S_W : Z_W;  // the z multiplier's operand: z or z^2
  localparam integer PX_W = 16 + XM_W;  // alpha * x
  localparam integer B_W = 17;  // the z term's constant: beta (16 bits) or PENALTY's sum of two 16-bit taus
  localparam integer PZ_W = B_W + ZM_W;  // b * z
  // The alignment's width: either product plus a rounding half (at most 2^46, a right shift by 47; ACC_W holds it);
  // the aligned terms are below 2^(ACC_W-3) (the start check), so their low ACC_W bits are exact.
  localparam integer AL_BASE = ((PX_W > PZ_W) ? PX_W : PZ_W) + 1;
  localparam integer AL_W = (AL_BASE > ACC_W) ? AL_BASE : ACC_W;
  localparam integer TAG_W = ADDR_W + B_W + 3;  // {addr_y, b, keep, last, valid} of an element
  localparam integer RQ_LAT = 3;  // tt_requant's LATENCY
  localparam [EW_OP_W-1:0] OP_LAST = (ADAM != 0) ? EW_OP_ADAM_STEP : EW_OP_PENALTY;
  localparam [31:0] X_W_U = X_W;
  localparam [31:0] Z_W_U = Z_W;
  localparam [31:0] OUT_W_U = OUT_W;
  localparam [31:0] MASK_N_U = MASK_N;
  localparam signed [31:0] ALIGN_TOP = ACC_W - 17;  // width + align <= ALIGN_TOP
  localparam signed [31:0] ALIGN_MIN = -47;
  localparam [31:0] ADAM_X_MAX = 17;  // ADAM_STEP's widest m, ADAM_V's widest g + 1: the squarer's 18 bits
  localparam [31:0] ADAM_Z_MAX = 16;
  localparam integer ADAM_STAGES = 5;  // u, bit length, normalise, ROM, square / m * RSQRT

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator); the
  // submodules check their own.
  generate
    if (ADDR_W < 8 || ADDR_W > 32) begin : g_bad_addr_w
      error_tt_ewise_ADDR_W_must_be_8_to_32 u_error ();
    end
    if (X_W < 2 || X_W > 32 || Z_W < 2 || Z_W > 32) begin : g_bad_src_w
      error_tt_ewise_X_W_and_Z_W_must_be_2_to_32 u_error ();
    end
    if (OUT_W < 2 || OUT_W > 32) begin : g_bad_out_w
      error_tt_ewise_OUT_W_must_be_2_to_32 u_error ();
    end
    // The products need not fit ACC_W (the alignment is wider); the aligned terms are bounded by ACC_W - 17.
    if (ACC_W < 32 || ACC_W > 64) begin : g_bad_acc_w
      error_tt_ewise_ACC_W_must_be_32_to_64 u_error ();
    end
    if (ADAM < 0 || ADAM > 1 || (ADAM == 1 && OUT_W < 16)) begin : g_bad_adam
      error_tt_ewise_ADAM_must_be_0_or_1_and_needs_OUT_W_at_least_16 u_error ();
    end
    if (RANK < 0 || RANK > 1) begin : g_bad_rank
      error_tt_ewise_RANK_must_be_0_or_1 u_error ();
    end
    if (MEM_LAT < 1 || MEM_LAT > 8) begin : g_bad_mem_lat
      error_tt_ewise_MEM_LAT_must_be_1_to_8 u_error ();
    end
    if (MASK_N < 1 || MASK_N > 16) begin : g_bad_mask_n
      error_tt_ewise_MASK_N_must_be_1_to_16 u_error ();
    end
  endgenerate

  // ---- op decode ----
  wire rank_op = (opcode == EW_OP_MASK) || (opcode == EW_OP_PENALTY);
  wire known  = opcode <= OP_LAST && (RANK != 0 || !rank_op);
  wire term_x = known && (opcode != EW_OP_ZERO);  // alpha * x is formed
  wire is_penalty = RANK != 0 && opcode == EW_OP_PENALTY;
  wire is_adam_v = ADAM != 0 && opcode == EW_OP_ADAM_V;
  wire is_step = ADAM != 0 && opcode == EW_OP_ADAM_STEP;
  wire term_z = (opcode == EW_OP_AXPBY) || (opcode == EW_OP_AXPBY_RELU) || is_penalty || is_adam_v;  // b * z is formed
  wire read_z = term_z || (opcode == EW_OP_RELU_BWD) || is_step;
  wire is_acc = opcode == EW_OP_ACC;
  wire read_old = is_acc || is_step;  // the old destination word: added (ACC) or the delta subtracted (ADAM_STEP)
  wire is_core = RANK != 0 && rank_op;  // indexes the rank slices of a core (r0, mn, r1)

  // ---- legality check (registered at start, tt_op_ctrl), busy / done / error ----
  wire signed [6:0] shift_s = shift;
  wire signed [6:0] ax_s = align_x;
  wire signed [6:0] az_s = align_z;
  // alignments and width + alignment, sign-extended to 32 bits for the compares with the limits
  wire signed [31:0] ax32 = $signed({{25{ax_s[6]}}, ax_s});
  wire signed [31:0] az32 = $signed({{25{az_s[6]}}, az_s});
  // The terms' widths for the accumulator bound: ADAM_STEP's x term is m * RSQRT (14 bits more), ADAM_V's z term z^2.
  wire signed [31:0] wx32 = $signed({26'd0, x_w}) + (is_step ? 32'sd14 : 32'sd0);
  wire signed [31:0] wz32 = is_adam_v ? $signed({25'd0, z_w, 1'b0}) - 32'sd1 : $signed({26'd0, z_w});
  wire signed [31:0] top_x = wx32 + ax32;
  wire signed [31:0] top_z = wz32 + az32;
  // ADAM_STEP's element shifts: shift + h for h in (-8 - F_v) >> 1 .. (max(z_w, 16) + 1 - F_v) >> 1
  // (golden.semantics.adam_h_range).
  wire signed [31:0] sh32 = $signed({{25{shift_s[6]}}, shift_s});
  wire signed [31:0] v_bits = (z_w > 6'd16) ? $signed({26'd0, z_w}) : 32'sd16;
  wire signed [31:0] h_lo = (-32'sd8 - az32) >>> 1;
  wire signed [31:0] h_hi = (v_bits + 32'sd1 - az32) >>> 1;
  wire [31:0] x_max = (is_step && ADAM_X_MAX < X_W_U) ? ADAM_X_MAX : X_W_U;
  wire [31:0] z_max = (is_adam_v && ADAM_Z_MAX < Z_W_U) ? ADAM_Z_MAX : Z_W_U;
  wire bad_shift = (shift_s < -7'sd16) || (shift_s > 7'sd47) ||
                   (is_step && ((sh32 + h_lo < -32'sd16) || (sh32 + h_hi > 32'sd47)));
  wire bad_width = (y_w < 6'd2) || ({26'd0, y_w} > OUT_W_U) ||
                   (term_x && ((x_w < 6'd2) || ({26'd0, x_w} > x_max))) ||
                   ((term_z || is_step) && ((z_w < 6'd2) || ({26'd0, z_w} > z_max)));
  wire bad_count = (count == {ADDR_W{1'b0}}) ||
                   (is_core && ((r0 == 5'd0) || ({27'd0, r0} > MASK_N_U) || (r1 == 5'd0) ||
                                ({27'd0, r1} > MASK_N_U) || (mn == {ADDR_W{1'b0}})));
  // an x term alone may reach 2^(ACC_W-2) (MASK over Adam's 32-bit v), one bit more than each of two terms
  wire signed [31:0] top_x_max = term_z ? ALIGN_TOP : ALIGN_TOP + 32'sd1;
  wire bad_align = (term_x && ((ax32 < ALIGN_MIN) || (top_x > top_x_max))) ||
                   (term_z && ((az32 < ALIGN_MIN) || (top_z > ALIGN_TOP)));
  wire [3:0] err_d = bad_shift ? EW_ERR_SHIFT :
                     bad_width ? EW_ERR_WIDTH :
                     bad_count ? EW_ERR_COUNT :
                     bad_align ? EW_ERR_ALIGN :
                     !known    ? EW_ERR_OPCODE :
                     (is_step && (beta[15] || beta == 16'd0)) ? EW_ERR_EPS : ERR_NONE;

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

  // ---- MASK, PENALTY: the tables, read on the x port before the elements ----
  // Left words (tab_on bit 0: r0 of them) then right words (bit 1: r1), one a cycle from the cycle after run; the
  // elements start MEM_LAT cycles after the last read (its word is in the table then), or a cycle after run with
  // no table. An entry is a word's low 16 bits: a mask is live if it is not 0, a tau is signed. An absent side
  // holds 1 (every slice live) for MASK and 0 (no tau) for PENALTY. Other ops start their elements with run.
  wire [4:0]        n_left = tab_on[0] ? r0 : 5'd0;
  wire [4:0]        n_right = tab_on[1] ? r1 : 5'd0;
  reg               tab_rd_q;     // a table read is issued this cycle
  reg  [4:0]        tab_idx_q;    // its entry
  reg               tab_side_q;   // 0 left, 1 right
  reg  [ADDR_W-1:0] tab_addr_q;
  reg  [3:0]        tab_wait_q;   // cycles until the elements start (1: this one), 0: not waiting
  wire              tab_last = tab_side_q ? (tab_idx_q == n_right - 5'd1)
                                          : (tab_idx_q == n_left - 5'd1) && n_right == 5'd0;
  wire [3:0]        mem_lat_4 = MEM_LAT[3:0];
  always @(posedge clk) begin
    if (rst) begin
      tab_rd_q   <= 1'b0;
      tab_wait_q <= 4'd0;
    end else if (run && is_core) begin
      tab_rd_q   <= (n_left != 5'd0) || (n_right != 5'd0);
      tab_wait_q <= (n_left == 5'd0 && n_right == 5'd0) ? 4'd1 : 4'd0;
      tab_idx_q  <= 5'd0;
      tab_side_q <= n_left == 5'd0;
      tab_addr_q <= (n_left == 5'd0) ? tab_right : tab_left;
    end else if (tab_rd_q) begin
      if (tab_last) begin
        tab_rd_q   <= 1'b0;
        tab_wait_q <= mem_lat_4;
      end else if (!tab_side_q && tab_idx_q == n_left - 5'd1) begin
        tab_side_q <= 1'b1;
        tab_idx_q  <= 5'd0;
        tab_addr_q <= tab_right;
      end else begin
        tab_idx_q  <= tab_idx_q + 5'd1;
        tab_addr_q <= tab_addr_q + {{(ADDR_W-1){1'b0}}, 1'b1};
      end
    end else if (tab_wait_q != 4'd0) begin
      tab_wait_q <= tab_wait_q - 4'd1;
    end
  end
  wire run_elems = (run && !is_core) || tab_wait_q == 4'd1;

  // the tables: entry r of a side in [16 r +: 16]; the read's {valid, side, entry} through the memory latency
  wire        tab_tag_valid;
  wire [5:0]  tab_tag_m;
  tt_delay #(
    .WIDTH (7),
    .DEPTH (MEM_LAT),
    .RESET (1)
  ) u_tab_tag (
    .clk (clk),
    .rst (rst),
    .d   ({tab_rd_q, tab_side_q, tab_idx_q}),
    .q   ({tab_tag_valid, tab_tag_m})
  );
  wire [15:0] tab_word;
  generate
    if (X_W >= 16) begin : g_tab_word
      assign tab_word = x_rd_data[15:0];
    end else begin : g_tab_word_ext
      assign tab_word = {{(16-X_W){x_rd_data[X_W-1]}}, x_rd_data};
    end
  endgenerate
  wire [16*16-1:0] tab_l;
  wire [16*16-1:0] tab_r;
  generate
    if (RANK != 0) begin : g_tables
      reg  [16*16-1:0] tab_l_q;
      reg  [16*16-1:0] tab_r_q;
      wire [15:0]      tab_absent = (opcode == EW_OP_MASK) ? 16'd1 : 16'd0;
      always @(posedge clk) begin
        if (run && is_core) begin
          tab_l_q <= {16{tab_absent}};
          tab_r_q <= {16{tab_absent}};
        end else if (tab_tag_valid && !tab_tag_m[5]) begin
          tab_l_q[16*tab_tag_m[3:0] +: 16] <= tab_word;
        end else if (tab_tag_valid) begin
          tab_r_q[16*tab_tag_m[3:0] +: 16] <= tab_word;
        end
      end
      assign tab_l = tab_l_q;
      assign tab_r = tab_r_q;
    end else begin : g_no_tables  // no MASK or PENALTY: nothing reads the tables
      wire unused_tab = ^{tab_tag_valid, tab_tag_m, tab_word};
      assign tab_l = {(16*16){1'b0}};
      assign tab_r = {(16*16){1'b0}};
    end
  endgenerate
  wire unused_tab_idx_hi = tab_tag_m[4];

  // ---- issue: one loop of count elements drives the three addresses ----
  wire              ia_valid;
  wire [ADDR_W-1:0] ia_x;
  wire [ADDR_W-1:0] ia_z;
  wire [ADDR_W-1:0] ia_y;
  wire              ia_last;
  wire              unused_ia_first;
  wire              unused_ia_last_red;
  wire              unused_ia_done;
  wire [ADDR_W-1:0] stride_one = {{(ADDR_W-1){1'b0}}, 1'b1};

  tt_loop_addr #(
    .NLOOPS (1),
    .NRED   (0),
    .CNT_W  (ADDR_W),
    .ADDR_W (ADDR_W)
  ) u_addr (
    .clk       (clk),
    .rst       (rst),
    .start     (run_elems),
    .counts    (count),
    .stride_a  (stride_one),
    .stride_b  (stride_one),
    .stride_o  (stride_one),
    .base_a    (x_base),
    .base_b    (z_base),
    .base_o    (y_base),
    .valid     (ia_valid),
    .ready     (1'b1),
    .addr_a    (ia_x),
    .addr_b    (ia_z),
    .addr_o    (ia_y),
    .first_red (unused_ia_first),
    .last_red  (unused_ia_last_red),
    .last      (ia_last),
    .done      (unused_ia_done)
  );

  // MASK, PENALTY: r_next and r_prev of the element, counted by a second nest (r1 innermost, then mn, then r0)
  // in lockstep with the first; its "addresses" are the two indices (unit strides on loops 0 and 2).
  wire [IDX_W-1:0] r_next;
  wire [IDX_W-1:0] r_prev;
  wire [IDX_W-1:0] unused_rk_o;
  wire             unused_rk_valid;
  wire             unused_rk_first;
  wire             unused_rk_last_red;
  wire             unused_rk_last;
  wire             unused_rk_done;
  wire [3*ADDR_W-1:0] rk_counts = {{(ADDR_W-5){1'b0}}, r0, mn, {(ADDR_W-5){1'b0}}, r1};

  tt_loop_addr #(
    .NLOOPS (3),
    .NRED   (0),
    .CNT_W  (ADDR_W),
    .ADDR_W (IDX_W)
  ) u_rank (
    .clk       (clk),
    .rst       (rst),
    .start     (run_elems && is_core),
    .counts    (rk_counts),
    .stride_a  ({4'd0, 4'd0, 4'd1}),
    .stride_b  ({4'd1, 4'd0, 4'd0}),
    .stride_o  ({3{4'd0}}),
    .base_a    (4'd0),
    .base_b    (4'd0),
    .base_o    (4'd0),
    .valid     (unused_rk_valid),
    .ready     (1'b1),
    .addr_a    (r_next),
    .addr_b    (r_prev),
    .addr_o    (unused_rk_o),
    .first_red (unused_rk_first),
    .last_red  (unused_rk_last_red),
    .last      (unused_rk_last),
    .done      (unused_rk_done)
  );

  wire keep_issue = tab_l[16*r_prev +: 16] != 16'd0 && tab_r[16*r_next +: 16] != 16'd0;
  // The z term's constant of the element: PENALTY's tau sum, else beta (both sign-extended to B_W bits).
  wire signed [15:0]    tau_l_e = tab_l[16*r_prev +: 16];
  wire signed [15:0]    tau_r_e = tab_r[16*r_next +: 16];
  wire signed [B_W-1:0] tau_sum = {tau_l_e[15], tau_l_e} + {tau_r_e[15], tau_r_e};
  wire signed [B_W-1:0] b_issue = is_penalty ? tau_sum : {beta[15], beta};

  assign x_rd_en   = (ia_valid && term_x) || tab_rd_q;
  assign x_rd_addr = tab_rd_q ? tab_addr_q : ia_x;
  assign z_rd_en   = ia_valid && read_z;
  assign z_rd_addr = ia_z;
  assign o_rd_en   = ia_valid && read_old;  // the old word waits in tt_writeback for its requantised increment
  assign o_rd_addr = ia_y;

  // ---- element tags through the memory latency: the flags reset, the address and b not (they count only with
  // valid) ----
  wire [TAG_W-1:0] tag_issue = {ia_y, b_issue, keep_issue, ia_last, ia_valid};
  wire [TAG_W-1:0] tag_m;
  tt_delay #(
    .WIDTH (3),
    .DEPTH (MEM_LAT),
    .RESET (1)
  ) u_mem_tag (
    .clk (clk),
    .rst (rst),
    .d   (tag_issue[2:0]),
    .q   (tag_m[2:0])
  );
  tt_delay #(
    .WIDTH (TAG_W - 3),
    .DEPTH (MEM_LAT)
  ) u_mem_fields (
    .clk (clk),
    .rst (rst),
    .d   (tag_issue[TAG_W-1:3]),
    .q   (tag_m[TAG_W-1:3])
  );
  wire              m_valid = tag_m[0];
  wire              m_last  = tag_m[1];
  wire              m_keep  = tag_m[2];
  wire [B_W-1:0]    m_b     = tag_m[B_W+2:3];
  wire [ADDR_W-1:0] m_addr  = tag_m[TAG_W-1:B_W+3];

  // ---- stage G: gate the operands (registered, so the bank data do not run into the multipliers) ----
  wire signed [X_W-1:0] xd = x_rd_data;
  wire signed [Z_W-1:0] zd = z_rd_data;
  reg gate;
  always @* begin
    case (opcode)
      EW_OP_RELU_BWD: gate = zd > $signed({Z_W{1'b0}});
      EW_OP_MASK:     gate = m_keep;
      EW_OP_ZERO:     gate = 1'b0;
      default:     gate = 1'b1;
    endcase
  end
  // Operands not read carry junk: the gate and the term enables zero them before the multipliers.
  wire signed [X_W-1:0]  x_op = (gate && term_x) ? xd : {X_W{1'b0}};
  wire signed [Z_W-1:0]  z_op = (gate && (term_z || is_step)) ? zd : {Z_W{1'b0}};

  reg                     g_valid_q;
  reg                     g_last_q;
  reg [ADDR_W-1:0]        g_addr_q;
  reg signed [X_W-1:0]    x_op_q;
  reg signed [Z_W-1:0]    z_op_q;
  reg signed [B_W-1:0]    b_q;
  always @(posedge clk) begin
    if (rst) begin
      g_valid_q <= 1'b0;
      g_last_q  <= 1'b0;
    end else begin
      g_valid_q <= m_valid;
      g_last_q  <= m_valid && m_last;
    end
    g_addr_q <= m_addr;
    x_op_q   <= x_op;
    z_op_q   <= z_op;
    b_q      <= m_b;
  end

  // ---- the multipliers' operands: from stage G, or (Adam ops) from the Adam stages ----
  wire                    n_valid;  // an element enters stage M
  wire                    n_last;
  wire [ADDR_W-1:0]       n_addr;
  wire signed [B_W-1:0]   n_b;
  wire signed [XM_W-1:0]  n_x;
  wire signed [ZM_W-1:0]  n_z;
  wire signed [7:0]       n_h;      // ADAM_STEP: the element's normalisation exponent, added to the RQ shift
  wire [OUT_W-1:0]        old_data;  // the old destination word, delayed like its element
  generate
    if (ADAM != 0) begin : g_adam
      // The five Adam stages carry every element (the other ops bypass them); each takes one step of SPEC 5.5.
      wire is_adam = is_adam_v || is_step;  // through the Adam stages
      localparam integer T_W = 1 + 1 + ADDR_W + B_W;  // {valid, last, addr, b}
      wire [T_W-1:0] tag_g = {g_valid_q, g_last_q, g_addr_q, b_q};
      // stage U: u = max(v, 0) + eps_q (ADAM_STEP: z is v; eps_q >= 1, so u >= 1)
      wire [U_W-1:0] v_pos = {{(U_W-Z_W+1){1'b0}}, z_op_q[Z_W-2:0]};  // z >= 0: its value bits
      wire [U_W-1:0] u_d = (z_op_q[Z_W-1] ? {U_W{1'b0}} : v_pos) + {{(U_W-15){1'b0}}, beta[14:0]};
      reg  [T_W-1:0]        u_tag_q;
      reg  [U_W-1:0]        u_q;
      reg  signed [X_W-1:0] u_x_q;
      reg  signed [Z_W-1:0] u_z_q;
      // stage L: the bit length b of u, then t = b - 8, made even with F_v (t + F_v even)
      reg  [7:0]            blen;
      integer               bi;
      always @* begin
        blen = 8'd0;
        for (bi = 0; bi < U_W; bi = bi + 1) begin
          if (u_q[bi]) begin
            blen = bi[7:0] + 8'd1;
          end
        end
      end
      wire signed [7:0]     t_raw = $signed(blen) - 8'sd8;
      wire signed [7:0]     t_d = t_raw + {7'd0, t_raw[0] ^ align_z[0]};
      reg  [T_W-1:0]        l_tag_q;
      reg  [U_W-1:0]        l_u_q;
      reg  signed [7:0]     l_t_q;
      reg  signed [X_W-1:0] l_x_q;
      reg  signed [Z_W-1:0] l_z_q;
      // stage N: idx = u >> t (u << -t for t < 0; t >= -7), in [64, 256); h = (t - F_v) / 2
      wire [U_W+6:0]        u_wide = {l_u_q, 7'd0};
      wire [7:0]            t_sh = l_t_q[7:0] + 8'd7;  // 0..U_W
      wire [U_W+6:0]        u_norm = u_wide >> t_sh;
      wire signed [7:0]     h_d = (l_t_q - {align_z[6], align_z}) >>> 1;
      reg  [T_W-1:0]        n_tag_q;
      reg  [7:0]            idx_q;
      reg  signed [7:0]     n_h_q;
      reg  signed [X_W-1:0] n_x_q;
      reg  signed [Z_W-1:0] n_z_q;
      // stage R: RSQRT[idx] = round(2^16 / sqrt(idx)), 64 <= idx < 256 (golden.semantics.RSQRT_ROM)
      reg  [13:0]           rsqrt;
      always @* begin
        case (idx_q)
      8'd64: rsqrt = 14'd8192;  8'd65: rsqrt = 14'd8129;  8'd66: rsqrt = 14'd8067;  8'd67: rsqrt = 14'd8006;
      8'd68: rsqrt = 14'd7947;  8'd69: rsqrt = 14'd7890;  8'd70: rsqrt = 14'd7833;  8'd71: rsqrt = 14'd7778;
      8'd72: rsqrt = 14'd7723;  8'd73: rsqrt = 14'd7670;  8'd74: rsqrt = 14'd7618;  8'd75: rsqrt = 14'd7567;
      8'd76: rsqrt = 14'd7517;  8'd77: rsqrt = 14'd7469;  8'd78: rsqrt = 14'd7420;  8'd79: rsqrt = 14'd7373;
      8'd80: rsqrt = 14'd7327;  8'd81: rsqrt = 14'd7282;  8'd82: rsqrt = 14'd7237;  8'd83: rsqrt = 14'd7194;
      8'd84: rsqrt = 14'd7151;  8'd85: rsqrt = 14'd7108;  8'd86: rsqrt = 14'd7067;  8'd87: rsqrt = 14'd7026;
      8'd88: rsqrt = 14'd6986;  8'd89: rsqrt = 14'd6947;  8'd90: rsqrt = 14'd6908;  8'd91: rsqrt = 14'd6870;
      8'd92: rsqrt = 14'd6833;  8'd93: rsqrt = 14'd6796;  8'd94: rsqrt = 14'd6760;  8'd95: rsqrt = 14'd6724;
      8'd96: rsqrt = 14'd6689;  8'd97: rsqrt = 14'd6654;  8'd98: rsqrt = 14'd6620;  8'd99: rsqrt = 14'd6587;
      8'd100: rsqrt = 14'd6554;  8'd101: rsqrt = 14'd6521;  8'd102: rsqrt = 14'd6489;  8'd103: rsqrt = 14'd6457;
      8'd104: rsqrt = 14'd6426;  8'd105: rsqrt = 14'd6396;  8'd106: rsqrt = 14'd6365;  8'd107: rsqrt = 14'd6336;
      8'd108: rsqrt = 14'd6306;  8'd109: rsqrt = 14'd6277;  8'd110: rsqrt = 14'd6249;  8'd111: rsqrt = 14'd6220;
      8'd112: rsqrt = 14'd6193;  8'd113: rsqrt = 14'd6165;  8'd114: rsqrt = 14'd6138;  8'd115: rsqrt = 14'd6111;
      8'd116: rsqrt = 14'd6085;  8'd117: rsqrt = 14'd6059;  8'd118: rsqrt = 14'd6033;  8'd119: rsqrt = 14'd6008;
      8'd120: rsqrt = 14'd5983;  8'd121: rsqrt = 14'd5958;  8'd122: rsqrt = 14'd5933;  8'd123: rsqrt = 14'd5909;
      8'd124: rsqrt = 14'd5885;  8'd125: rsqrt = 14'd5862;  8'd126: rsqrt = 14'd5838;  8'd127: rsqrt = 14'd5815;
      8'd128: rsqrt = 14'd5793;  8'd129: rsqrt = 14'd5770;  8'd130: rsqrt = 14'd5748;  8'd131: rsqrt = 14'd5726;
      8'd132: rsqrt = 14'd5704;  8'd133: rsqrt = 14'd5683;  8'd134: rsqrt = 14'd5661;  8'd135: rsqrt = 14'd5640;
      8'd136: rsqrt = 14'd5620;  8'd137: rsqrt = 14'd5599;  8'd138: rsqrt = 14'd5579;  8'd139: rsqrt = 14'd5559;
      8'd140: rsqrt = 14'd5539;  8'd141: rsqrt = 14'd5519;  8'd142: rsqrt = 14'd5500;  8'd143: rsqrt = 14'd5480;
      8'd144: rsqrt = 14'd5461;  8'd145: rsqrt = 14'd5442;  8'd146: rsqrt = 14'd5424;  8'd147: rsqrt = 14'd5405;
      8'd148: rsqrt = 14'd5387;  8'd149: rsqrt = 14'd5369;  8'd150: rsqrt = 14'd5351;  8'd151: rsqrt = 14'd5333;
      8'd152: rsqrt = 14'd5316;  8'd153: rsqrt = 14'd5298;  8'd154: rsqrt = 14'd5281;  8'd155: rsqrt = 14'd5264;
      8'd156: rsqrt = 14'd5247;  8'd157: rsqrt = 14'd5230;  8'd158: rsqrt = 14'd5214;  8'd159: rsqrt = 14'd5197;
      8'd160: rsqrt = 14'd5181;  8'd161: rsqrt = 14'd5165;  8'd162: rsqrt = 14'd5149;  8'd163: rsqrt = 14'd5133;
      8'd164: rsqrt = 14'd5118;  8'd165: rsqrt = 14'd5102;  8'd166: rsqrt = 14'd5087;  8'd167: rsqrt = 14'd5071;
      8'd168: rsqrt = 14'd5056;  8'd169: rsqrt = 14'd5041;  8'd170: rsqrt = 14'd5026;  8'd171: rsqrt = 14'd5012;
      8'd172: rsqrt = 14'd4997;  8'd173: rsqrt = 14'd4983;  8'd174: rsqrt = 14'd4968;  8'd175: rsqrt = 14'd4954;
      8'd176: rsqrt = 14'd4940;  8'd177: rsqrt = 14'd4926;  8'd178: rsqrt = 14'd4912;  8'd179: rsqrt = 14'd4898;
      8'd180: rsqrt = 14'd4885;  8'd181: rsqrt = 14'd4871;  8'd182: rsqrt = 14'd4858;  8'd183: rsqrt = 14'd4845;
      8'd184: rsqrt = 14'd4831;  8'd185: rsqrt = 14'd4818;  8'd186: rsqrt = 14'd4805;  8'd187: rsqrt = 14'd4792;
      8'd188: rsqrt = 14'd4780;  8'd189: rsqrt = 14'd4767;  8'd190: rsqrt = 14'd4754;  8'd191: rsqrt = 14'd4742;
      8'd192: rsqrt = 14'd4730;  8'd193: rsqrt = 14'd4717;  8'd194: rsqrt = 14'd4705;  8'd195: rsqrt = 14'd4693;
      8'd196: rsqrt = 14'd4681;  8'd197: rsqrt = 14'd4669;  8'd198: rsqrt = 14'd4657;  8'd199: rsqrt = 14'd4646;
      8'd200: rsqrt = 14'd4634;  8'd201: rsqrt = 14'd4623;  8'd202: rsqrt = 14'd4611;  8'd203: rsqrt = 14'd4600;
      8'd204: rsqrt = 14'd4588;  8'd205: rsqrt = 14'd4577;  8'd206: rsqrt = 14'd4566;  8'd207: rsqrt = 14'd4555;
      8'd208: rsqrt = 14'd4544;  8'd209: rsqrt = 14'd4533;  8'd210: rsqrt = 14'd4522;  8'd211: rsqrt = 14'd4512;
      8'd212: rsqrt = 14'd4501;  8'd213: rsqrt = 14'd4490;  8'd214: rsqrt = 14'd4480;  8'd215: rsqrt = 14'd4470;
      8'd216: rsqrt = 14'd4459;  8'd217: rsqrt = 14'd4449;  8'd218: rsqrt = 14'd4439;  8'd219: rsqrt = 14'd4429;
      8'd220: rsqrt = 14'd4418;  8'd221: rsqrt = 14'd4408;  8'd222: rsqrt = 14'd4398;  8'd223: rsqrt = 14'd4389;
      8'd224: rsqrt = 14'd4379;  8'd225: rsqrt = 14'd4369;  8'd226: rsqrt = 14'd4359;  8'd227: rsqrt = 14'd4350;
      8'd228: rsqrt = 14'd4340;  8'd229: rsqrt = 14'd4331;  8'd230: rsqrt = 14'd4321;  8'd231: rsqrt = 14'd4312;
      8'd232: rsqrt = 14'd4303;  8'd233: rsqrt = 14'd4293;  8'd234: rsqrt = 14'd4284;  8'd235: rsqrt = 14'd4275;
      8'd236: rsqrt = 14'd4266;  8'd237: rsqrt = 14'd4257;  8'd238: rsqrt = 14'd4248;  8'd239: rsqrt = 14'd4239;
      8'd240: rsqrt = 14'd4230;  8'd241: rsqrt = 14'd4222;  8'd242: rsqrt = 14'd4213;  8'd243: rsqrt = 14'd4204;
      8'd244: rsqrt = 14'd4196;  8'd245: rsqrt = 14'd4187;  8'd246: rsqrt = 14'd4178;  8'd247: rsqrt = 14'd4170;
      8'd248: rsqrt = 14'd4162;  8'd249: rsqrt = 14'd4153;  8'd250: rsqrt = 14'd4145;  8'd251: rsqrt = 14'd4137;
      8'd252: rsqrt = 14'd4128;  8'd253: rsqrt = 14'd4120;  8'd254: rsqrt = 14'd4112;  8'd255: rsqrt = 14'd4104;
          default: rsqrt = 14'd0;  // idx < 64: never, u's top bits are normalised
        endcase
      end
      // ... and the 18 x 18 multiplier's operands, registered (the multiplier then starts from flip-flops): m and
      // RSQRT (ADAM_STEP; x_w <= 17) or z and z (ADAM_V; z_w <= 16), sign-extended past SQ_W (the start check keeps
      // their values within SQ_W bits)
      localparam integer EX_W = (X_W > SQ_W) ? X_W + 1 : SQ_W + 1;
      localparam integer EZ_W = (Z_W > SQ_W) ? Z_W + 1 : SQ_W + 1;
      wire [EX_W-1:0]        n_x_ext = {{(EX_W-X_W+1){n_x_q[X_W-1]}}, n_x_q[X_W-2:0]};
      wire [EZ_W-1:0]        n_z_ext = {{(EZ_W-Z_W+1){n_z_q[Z_W-1]}}, n_z_q[Z_W-2:0]};
      wire unused_ext = ^{n_x_ext[EX_W-1:SQ_W], n_z_ext[EZ_W-1:SQ_W]};
      reg  [T_W-1:0]         r_tag_q;
      reg  signed [SQ_W-1:0] r_a_q;
      reg  signed [SQ_W-1:0] r_b_q;
      reg  signed [7:0]      r_h_q;
      reg  signed [X_W-1:0]  r_x_q;
      // stage Q: the product, m * RSQRT or z^2
      reg  [T_W-1:0]        q_tag_q;
      reg  signed [S_W-1:0] q_s_q;
      reg  signed [7:0]     q_h_q;
      reg  signed [X_W-1:0] q_x_q;
      always @(posedge clk) begin
        if (rst) begin
          u_tag_q[T_W-1] <= 1'b0;
          l_tag_q[T_W-1] <= 1'b0;
          n_tag_q[T_W-1] <= 1'b0;
          r_tag_q[T_W-1] <= 1'b0;
          q_tag_q[T_W-1] <= 1'b0;
        end else begin
          u_tag_q[T_W-1] <= tag_g[T_W-1];
          l_tag_q[T_W-1] <= u_tag_q[T_W-1];
          n_tag_q[T_W-1] <= l_tag_q[T_W-1];
          r_tag_q[T_W-1] <= n_tag_q[T_W-1];
          q_tag_q[T_W-1] <= r_tag_q[T_W-1];
        end
        u_tag_q[T_W-2:0] <= tag_g[T_W-2:0];
        u_q     <= u_d;
        u_x_q   <= x_op_q;
        u_z_q   <= z_op_q;
        l_tag_q[T_W-2:0] <= u_tag_q[T_W-2:0];
        l_u_q   <= u_q;
        l_t_q   <= t_d;
        l_x_q   <= u_x_q;
        l_z_q   <= u_z_q;
        n_tag_q[T_W-2:0] <= l_tag_q[T_W-2:0];
        idx_q   <= u_norm[7:0];
        n_h_q   <= h_d;
        n_x_q   <= l_x_q;
        n_z_q   <= l_z_q;
        r_tag_q[T_W-2:0] <= n_tag_q[T_W-2:0];
        r_a_q   <= is_step ? n_x_ext[SQ_W-1:0] : n_z_ext[SQ_W-1:0];
        r_b_q   <= is_step ? $signed({4'd0, rsqrt}) : n_z_ext[SQ_W-1:0];
        r_h_q   <= n_h_q;
        r_x_q   <= n_x_q;
        q_tag_q[T_W-2:0] <= r_tag_q[T_W-2:0];
        q_s_q   <= r_a_q * r_b_q;
        q_h_q   <= r_h_q;
        q_x_q   <= r_x_q;
      end
      wire unused_norm = ^{u_norm[U_W+6:8], t_sh};
      wire [OUT_W-1:0] old_late;
      tt_delay #(
        .WIDTH (OUT_W),
        .DEPTH (ADAM_STAGES)
      ) u_old_late (
        .clk (clk),
        .rst (rst),
        .d   (o_rd_data),
        .q   (old_late)
      );
      wire [T_W-1:0] tag_n = is_adam ? q_tag_q : tag_g;
      assign n_valid  = tag_n[T_W-1];
      assign n_last   = tag_n[T_W-2];
      assign n_addr   = tag_n[B_W +: ADDR_W];
      assign n_b      = tag_n[B_W-1:0];
      // sign extensions written with at least one copy of the sign bit (XM_W may equal S_W or X_W)
      wire signed [XM_W-1:0] s_as_x = {{(XM_W-S_W+1){q_s_q[S_W-1]}}, q_s_q[S_W-2:0]};
      wire signed [XM_W-1:0] v_as_x = {{(XM_W-X_W+1){q_x_q[X_W-1]}}, q_x_q[X_W-2:0]};
      wire signed [XM_W-1:0] x_as_x = {{(XM_W-X_W+1){x_op_q[X_W-1]}}, x_op_q[X_W-2:0]};
      wire signed [ZM_W-1:0] s_as_z = {{(ZM_W-S_W+1){q_s_q[S_W-1]}}, q_s_q[S_W-2:0]};
      wire signed [ZM_W-1:0] z_as_z = {{(ZM_W-Z_W+1){z_op_q[Z_W-1]}}, z_op_q[Z_W-2:0]};
      assign n_x      = is_step ? s_as_x : (is_adam_v ? v_as_x : x_as_x);
      assign n_z      = is_adam_v ? s_as_z : (is_step ? {ZM_W{1'b0}} : z_as_z);
      assign n_h      = is_step ? q_h_q : 8'sd0;
      assign old_data = is_adam ? old_late : o_rd_data;
    end else begin : g_no_adam
      assign n_valid  = g_valid_q;
      assign n_last   = g_last_q;
      assign n_addr   = g_addr_q;
      assign n_b      = b_q;
      assign n_x      = x_op_q;
      assign n_z      = z_op_q;
      assign n_h      = 8'sd0;
      assign old_data = o_rd_data;
    end
  endgenerate

  // ---- stage M: two multipliers ----
  wire signed [PX_W-1:0] px_d = $signed(alpha) * n_x;
  wire signed [PZ_W-1:0] pz_d = n_b * n_z;

  reg                     p_valid_q;
  reg                     p_last_q;
  reg [ADDR_W-1:0]        p_addr_q;
  reg signed [7:0]        p_h_q;
  reg signed [PX_W-1:0]   px_q;
  reg signed [PZ_W-1:0]   pz_q;
  always @(posedge clk) begin
    if (rst) begin
      p_valid_q <= 1'b0;
      p_last_q  <= 1'b0;
    end else begin
      p_valid_q <= n_valid;
      p_last_q  <= n_valid && n_last;
    end
    p_addr_q <= n_addr;
    p_h_q    <= n_h;
    px_q     <= px_d;
    pz_q     <= pz_d;
  end

  // The alignment constants of the descriptor, registered (the ports are stable from start, the first element
  // reaches stage A MEM_LAT + 1 cycles later): right-shift amounts (used when the alignment is < 0) and the
  // rounding halves.
  reg [6:0]               rx_q;
  reg [6:0]               rz_q;
  reg signed [AL_W-1:0]   half_x_q;
  reg signed [AL_W-1:0]   half_z_q;
  always @(posedge clk) begin
    rx_q     <= 7'd0 - align_x;
    rz_q     <= 7'd0 - align_z;
    // A right shift rounds half up (half an output LSB added first): a floor would be a bias of -1 for every
    // negative product. The half is at most 2^46 (shift <= 47); AL_W holds it beside either product.
    half_x_q <= {{(AL_W-1){1'b0}}, 1'b1} <<< (7'd0 - align_x - 7'd1);
    half_z_q <= {{(AL_W-1){1'b0}}, 1'b1} <<< (7'd0 - align_z - 7'd1);
  end

  // ---- stage A: align both products to the common fraction (SPEC 5.2) ----
  wire signed [AL_W-1:0]  px_w = {{(AL_W-PX_W){px_q[PX_W-1]}}, px_q};
  wire signed [AL_W-1:0]  pz_w = {{(AL_W-PZ_W){pz_q[PZ_W-1]}}, pz_q};
  wire signed [AL_W-1:0]  tx = ax_s[6] ? ((px_w + half_x_q) >>> rx_q) : (px_w <<< align_x);
  wire signed [AL_W-1:0]  tz = az_s[6] ? ((pz_w + half_z_q) >>> rz_q) : (pz_w <<< align_z);
  generate
    if (AL_W > ACC_W) begin : g_t_top
      wire [2*(AL_W-ACC_W)-1:0] unused_t_top = {tx[AL_W-1:ACC_W], tz[AL_W-1:ACC_W]};  // within ACC_W (start check)
    end
  endgenerate

  reg                     t_valid_q;
  reg                     t_last_q;
  reg [ADDR_W-1:0]        t_addr_q;
  reg signed [7:0]        t_h_q;
  reg signed [ACC_W-1:0]  tx_q;
  reg signed [ACC_W-1:0]  tz_q;
  always @(posedge clk) begin
    if (rst) begin
      t_valid_q <= 1'b0;
      t_last_q  <= 1'b0;
    end else begin
      t_valid_q <= p_valid_q;
      t_last_q  <= p_last_q;
    end
    t_addr_q <= p_addr_q;
    t_h_q    <= p_h_q;
    tx_q     <= tx[ACC_W-1:0];
    tz_q     <= tz[ACC_W-1:0];
  end

  // ---- stage S: add; the element's RQ shift (ADAM_STEP: shift + h, in range by the start check) ----
  reg                     a_valid_q;
  reg                     a_last_q;
  reg [ADDR_W-1:0]        a_addr_q;
  reg [ACC_W-1:0]         acc_q;
  reg [6:0]               a_shift_q;
  wire signed [7:0]       shift_e = {shift_s[6], shift_s} + t_h_q;
  always @(posedge clk) begin
    if (rst) begin
      a_valid_q <= 1'b0;
      a_last_q  <= 1'b0;
    end else begin
      a_valid_q <= t_valid_q;
      a_last_q  <= t_last_q;
    end
    a_addr_q  <= t_addr_q;
    acc_q     <= tx_q + tz_q;  // cannot wrap: the alignments were checked at start
    a_shift_q <= shift_e[6:0];
  end
  wire unused_shift_e = shift_e[7];

  // ---- random stream: one draw per element, STOCHASTIC only (SPEC 2.2) ----
  wire [7:0] rnd;
  tt_lfsr #(
    .DRAWS (1)
  ) u_lfsr (
    .clk       (clk),
    .rst       (rst),
    .seed_load (seed_load),
    .seed      (seed),
    .advance   (a_valid_q && mode),
    .leap      (1'b0),  // one draw per element
    .rnd       (rnd),
    .state     (lfsr_state)
  );

  wire             rq_valid;
  wire [OUT_W-1:0] rq_y;
  wire             rq_sat;
  wire             unused_rq_shift_err;  // cannot fire: shifts are checked at start
  tt_requant #(
    .ACC_W (ACC_W),
    .OUT_W (OUT_W),
    .LANES (1)
  ) u_rq (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (a_valid_q),
    .acc       (acc_q),
    .shift     (a_shift_q),
    .mode      (mode),
    .rnd       (rnd),
    .out_valid (rq_valid),
    .y         (rq_y),
    .sat       (rq_sat),
    .shift_err (unused_rq_shift_err)
  );

  // ---- write back: clamp, saturating accumulate, statistics (shared with the other unit) ----
  wire [31:0]      wb_sat_count;
  wire [OUT_W-1:0] wb_maxabs;
  wire [OUT_W-1:0] wb_data;
  wire             unused_wr_wide;  // one element a write
  tt_writeback #(
    .ADDR_W    (ADDR_W),
    .OUT_W     (OUT_W),
    .TAG_DELAY (RQ_LAT),
    .OLD_DELAY (4 + RQ_LAT)  // the old word arrives with the operands (stage G, or Q through old_late): stages M, A,
                             // S, the requantiser
  ) u_writeback (
    .clk        (clk),
    .rst        (rst),
    .clear      (run),
    .tag_fin    (a_valid_q && a_last_q),
    .tag_addr   (a_addr_q),
    .in_valid   (rq_valid),
    .wide       (1'b0),
    .rq_y       (rq_y),
    .rq_sat     (rq_sat),
    .old_data   (old_data),
    .accumulate (read_old),
    .rq_w       (is_step ? 6'd16 : y_w),  // ADAM_STEP: delta = SAT_16(RQ), uncounted and negated
    .rq_count   (!is_step),
    .negate     (is_step),
    .out_w      (y_w),
    .wr_en      (o_wr_en),
    .wr_wide    (unused_wr_wide),
    .wr_addr    (o_wr_addr),
    .wr_data    (wb_data),
    .fin        (fin_q),
    .sat_count  (wb_sat_count),
    .maxabs     (wb_maxabs)
  );

  // AXPBY_RELU writes max(y, 0): after the statistics, which are y's (the descriptor is stable until done)
  assign o_wr_data  = (opcode == EW_OP_AXPBY_RELU && wb_data[OUT_W-1]) ? {OUT_W{1'b0}} : wb_data;
  assign error      = err_q != ERR_NONE;
  assign error_code = err_q;
  assign sat_count  = wb_sat_count;
  assign maxabs     = wb_maxabs;

endmodule
`default_nettype wire
