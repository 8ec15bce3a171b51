`default_nettype none
// tt_ewise: the element-wise unit, v1 (one element per cycle). Executes one element-wise descriptor
// (golden/isa.py EwiseDesc; SPEC 5.2 AXPBY, 5.3 RELU / RELU_BWD, 5.5 ACC, DERIVE, ZERO, 5.6 MASK and PENALTY)
// bit-exactly. Element i = 0 .. count-1 reads x and z at base + i and writes y at y_base + i:
//   t = A(alpha * x, align_x) + A(b * z, align_z)   A(p, e) = p * 2^e (e >= 0), floor((p + 2^(-e-1)) / 2^-e) (e < 0)
//   y = SAT_y_w(RQ(gate ? t : 0, shift, mode))      ACC: y = SAT_y_w(old y + that)
// The z term is formed by AXPBY (b = beta) and PENALTY (b = tau_left[r_prev] + tau_right[r_next], 17 bits: the
// rank prior's gradient of element (r_prev, m*n, r_next) of a core of shape (r0, mn, r1)), the x term by every
// op but ZERO. gate is 1 except RELU (x > 0), RELU_BWD (z > 0: z is the saved activation h), MASK
// (mask_left[r_prev] & mask_right[r_next]) and ZERO (0). Every op is this one datapath: RELU is y = x gated,
// DERIVE and ACC are RQ(x, shift) with alpha = 1, ZERO is a gate of 0.
// mode 1 (STOCHASTIC) consumes one LFSR draw per element in element order (SPEC 2.2), mode 0 none; the
// saturation count (ACC can count an element twice: the RQ clamp and the clamp of the sum, as in the golden
// machine) and max |word written| (the max register of an adaptive destination, SPEC 4.2) cover the op.
//
// Memories are outside, as in tt_contract: synchronous read ports of fixed latency MEM_LAT (address and
// rd_en in cycle c, data valid in cycle c + MEM_LAT) for x, z (AXPBY, RELU_BWD) and the old destination word
// (ACC), one write port (taken at the end of the cycle wr_en is high). Read data are signed; a narrow bank
// sign-extends its words. Element n+1 is read before element n is written, so a source must be the
// destination itself (in place) or lie apart from it (the lowering checks it); nothing needs forwarding.
// Descriptor ports and masks must be held stable from start until done.
//
// Timing (no stalls): start in cycle 0, the descriptor check in cycle 1 (tt_op_ctrl), element i issued in cycle
// 2 + i, its write on the port in cycle i + MEM_LAT + 11, done (and busy low) from cycle count + MEM_LAT + 12
// until the next start: count + MEM_LAT + 12 cycles per op. Pipeline: issue (tt_loop_addr) -> MEM_LAT -> gate
// (registered) -> two multipliers (registered) -> alignment (registered) -> add (registered) -> tt_requant (3) ->
// tt_writeback: clamp (registered), accumulate and registered write, statistics.
//
// Errors are found in the check cycle, before any memory access or draw, so an illegal op leaves every memory
// and the LFSR untouched: done and error rise the cycle after it with error_code (the lowest that applies)
//   1 shift outside -16..47; 2 y_w outside 2..OUT_W, or x_w (x term) / z_w (z term) outside 2..X_W / 2..Z_W;
//   3 count 0, or a MASK / PENALTY with r0 or r1 outside 1..MASK_N or mn 0; 4 an alignment of a formed term
//   below -47 or with width + align > ACC_W - 17 (each term is then below 2^(ACC_W-3), PENALTY's z term below
//   2^(ACC_W-2), and their sum cannot overflow); 5 unknown opcode. golden.isa.ewise_error is the reference.
//   A start while busy is ignored.
module tt_ewise #(
  parameter integer ADDR_W  = 20,  // element address and count width, 8..32
  parameter integer X_W     = 16,  // x read data width, signed, 2..32
  parameter integer Z_W     = 16,  // z read data width, signed, 2..32
  parameter integer OUT_W   = 16,  // destination word width (the widest y_w), 2..32
  parameter integer ACC_W   = 48,  // accumulator (SPEC 1.2)
  parameter integer MEM_LAT = 1,   // read latency of the memory ports, 1..8
  parameter integer MASK_N  = 16   // mask bits per side (the largest rank), 1..16
) (
  input  wire               clk,
  input  wire               rst,
  // random stream (SPEC 3): persistent across ops
  input  wire               seed_load,
  input  wire [31:0]        seed,
  output wire [31:0]        lfsr_state,
  // op descriptor (golden.isa.pack_ewise_ports)
  input  wire               start,
  input  wire [3:0]         opcode,      // 0 AXPBY, 1 ACC, 2 RELU, 3 RELU_BWD, 4 DERIVE, 5 ZERO, 6 MASK, 7 PENALTY
  input  wire [ADDR_W-1:0]  count,
  input  wire [ADDR_W-1:0]  x_base,
  input  wire [ADDR_W-1:0]  z_base,
  input  wire [ADDR_W-1:0]  y_base,
  input  wire [15:0]        alpha,       // signed
  input  wire [15:0]        beta,        // signed
  input  wire [6:0]         align_x,     // signed: left shift >= 0, right shift rounding half up < 0
  input  wire [6:0]         align_z,     // signed
  input  wire [6:0]         shift,       // signed, RQ shift
  input  wire               mode,        // 0 nearest, 1 stochastic
  input  wire [5:0]         x_w,         // operand widths (the accumulator bound), destination width
  input  wire [5:0]         z_w,
  input  wire [5:0]         y_w,
  input  wire [4:0]         r0,          // MASK, PENALTY: core shape (r0, mn, r1)
  input  wire [ADDR_W-1:0]  mn,
  input  wire [4:0]         r1,
  input  wire [MASK_N-1:0]  mask_left,   // bit r: slice r of the left bond is live
  input  wire [MASK_N-1:0]  mask_right,
  input  wire [16*MASK_N-1:0] tau_left,  // PENALTY: entry r in [16 r +: 16], signed
  input  wire [16*MASK_N-1:0] tau_right,
  // status
  output wire               busy,
  output wire               done,
  output wire               error,
  output wire [3:0]         error_code,
  output wire [31:0]        sat_count,   // this op's saturations, saturating
  output wire [OUT_W-1:0]   maxabs,      // this op's max |word written|
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

  localparam integer IDX_W = 4;  // rank index (0..MASK_N-1)
  localparam integer PX_W = 16 + X_W;  // alpha * x
  localparam integer B_W = 17;  // the z term's constant: beta (16 bits) or PENALTY's sum of two 16-bit taus
  localparam integer PZ_W = B_W + Z_W;  // b * z
  localparam integer TAG_W = ADDR_W + B_W + 3;  // {addr_y, b, keep, last, valid} of an element
  localparam integer RQ_LAT = 3;  // tt_requant's LATENCY
  localparam [3:0] OP_AXPBY = 4'd0;
  localparam [3:0] OP_ACC = 4'd1;
  localparam [3:0] OP_RELU = 4'd2;
  localparam [3:0] OP_RELU_BWD = 4'd3;
  localparam [3:0] OP_ZERO = 4'd5;
  localparam [3:0] OP_MASK = 4'd6;
  localparam [3:0] OP_PENALTY = 4'd7;
  localparam [3:0] OP_LAST = 4'd7;
  localparam [3:0] ERR_NONE = 4'd0;
  localparam [3:0] ERR_SHIFT = 4'd1;
  localparam [3:0] ERR_WIDTH = 4'd2;
  localparam [3:0] ERR_COUNT = 4'd3;
  localparam [3:0] ERR_ALIGN = 4'd4;
  localparam [3:0] ERR_OPCODE = 4'd5;
  localparam [31:0] X_W_U = X_W;
  localparam [31:0] Z_W_U = Z_W;
  localparam [31:0] OUT_W_U = OUT_W;
  localparam [31:0] MASK_N_U = MASK_N;
  localparam signed [31:0] ALIGN_TOP = ACC_W - 17;  // width + align <= ALIGN_TOP
  localparam signed [31:0] ALIGN_MIN = -47;

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
    // Wider than each product (alpha * x: 16 + X_W bits; b * z: 17 + Z_W bits), at most 64.
    if (ACC_W < X_W + 17 || ACC_W < Z_W + 18 || ACC_W > 64) begin : g_bad_acc_w
      error_tt_ewise_ACC_W_must_exceed_X_W_plus_16_and_Z_W_plus_17_and_be_at_most_64 u_error ();
    end
    if (MEM_LAT < 1 || MEM_LAT > 8) begin : g_bad_mem_lat
      error_tt_ewise_MEM_LAT_must_be_1_to_8 u_error ();
    end
    if (MASK_N < 1 || MASK_N > 16) begin : g_bad_mask_n
      error_tt_ewise_MASK_N_must_be_1_to_16 u_error ();
    end
  endgenerate

  // ---- op decode ----
  wire known  = opcode <= OP_LAST;
  wire term_x = known && (opcode != OP_ZERO);  // alpha * x is formed
  wire is_penalty = opcode == OP_PENALTY;
  wire term_z = (opcode == OP_AXPBY) || is_penalty;  // b * z is formed
  wire read_z = term_z || (opcode == OP_RELU_BWD);
  wire is_acc = opcode == OP_ACC;
  wire is_core = (opcode == OP_MASK) || is_penalty;  // indexes the rank slices of a core (r0, mn, r1)

  // ---- legality check (registered at start, tt_op_ctrl), busy / done / error ----
  wire signed [6:0] shift_s = shift;
  wire signed [6:0] ax_s = align_x;
  wire signed [6:0] az_s = align_z;
  // alignments and width + alignment, sign-extended to 32 bits for the compares with the limits
  wire signed [31:0] ax32 = $signed({{25{ax_s[6]}}, ax_s});
  wire signed [31:0] az32 = $signed({{25{az_s[6]}}, az_s});
  wire signed [31:0] top_x = $signed({26'd0, x_w}) + ax32;
  wire signed [31:0] top_z = $signed({26'd0, z_w}) + az32;
  wire bad_shift = (shift_s < -7'sd16) || (shift_s > 7'sd47);
  wire bad_width = (y_w < 6'd2) || ({26'd0, y_w} > OUT_W_U) ||
                   (term_x && ((x_w < 6'd2) || ({26'd0, x_w} > X_W_U))) ||
                   (term_z && ((z_w < 6'd2) || ({26'd0, z_w} > Z_W_U)));
  wire bad_count = (count == {ADDR_W{1'b0}}) ||
                   (is_core && ((r0 == 5'd0) || ({27'd0, r0} > MASK_N_U) || (r1 == 5'd0) ||
                                ({27'd0, r1} > MASK_N_U) || (mn == {ADDR_W{1'b0}})));
  wire bad_align = (term_x && ((ax32 < ALIGN_MIN) || (top_x > ALIGN_TOP))) ||
                   (term_z && ((az32 < ALIGN_MIN) || (top_z > ALIGN_TOP)));
  wire [3:0] err_d = bad_shift ? ERR_SHIFT :
                     bad_width ? ERR_WIDTH :
                     bad_count ? ERR_COUNT :
                     bad_align ? ERR_ALIGN :
                     !known    ? ERR_OPCODE : ERR_NONE;

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
    .start     (run),
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
    .start     (run && is_core),
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

  reg [15:0]      mask_l16;
  reg [15:0]      mask_r16;
  reg [16*16-1:0] tau_l16;
  reg [16*16-1:0] tau_r16;
  always @* begin
    mask_l16 = 16'd0;
    mask_r16 = 16'd0;
    tau_l16  = {(16*16){1'b0}};
    tau_r16  = {(16*16){1'b0}};
    mask_l16[MASK_N-1:0]    = mask_left;
    mask_r16[MASK_N-1:0]    = mask_right;
    tau_l16[16*MASK_N-1:0]  = tau_left;
    tau_r16[16*MASK_N-1:0]  = tau_right;
  end
  wire keep_issue = mask_l16[r_prev] && mask_r16[r_next];
  // The z term's constant of the element: PENALTY's tau sum, else beta (both sign-extended to B_W bits).
  wire signed [15:0]    tau_l_e = tau_l16[16*r_prev +: 16];
  wire signed [15:0]    tau_r_e = tau_r16[16*r_next +: 16];
  wire signed [B_W-1:0] tau_sum = {tau_l_e[15], tau_l_e} + {tau_r_e[15], tau_r_e};
  wire signed [B_W-1:0] b_issue = is_penalty ? tau_sum : {beta[15], beta};

  assign x_rd_en   = ia_valid && term_x;
  assign x_rd_addr = ia_x;
  assign z_rd_en   = ia_valid && read_z;
  assign z_rd_addr = ia_z;
  assign o_rd_en   = ia_valid && is_acc;  // the old word waits in tt_writeback for its requantised increment
  assign o_rd_addr = ia_y;

  // ---- element tags through the memory latency ----
  wire [TAG_W-1:0] tag_issue = {ia_y, b_issue, keep_issue, ia_last, ia_valid};
  wire [TAG_W-1:0] tag_m;
  tt_delay #(
    .WIDTH (TAG_W),
    .DEPTH (MEM_LAT),
    .RESET (1)
  ) u_mem_tag (
    .clk (clk),
    .rst (rst),
    .d   (tag_issue),
    .q   (tag_m)
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
      OP_RELU:     gate = xd > $signed({X_W{1'b0}});
      OP_RELU_BWD: gate = zd > $signed({Z_W{1'b0}});
      OP_MASK:     gate = m_keep;
      OP_ZERO:     gate = 1'b0;
      default:     gate = 1'b1;
    endcase
  end
  // Operands not read carry junk: the gate and the term enables zero them before the multipliers.
  wire signed [X_W-1:0]  x_op = (gate && term_x) ? xd : {X_W{1'b0}};
  wire signed [Z_W-1:0]  z_op = (gate && term_z) ? zd : {Z_W{1'b0}};

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

  // ---- stage M: two multipliers ----
  wire signed [PX_W-1:0] px_d = $signed(alpha) * x_op_q;
  wire signed [PZ_W-1:0] pz_d = b_q * z_op_q;

  reg                     p_valid_q;
  reg                     p_last_q;
  reg [ADDR_W-1:0]        p_addr_q;
  reg signed [PX_W-1:0]   px_q;
  reg signed [PZ_W-1:0]   pz_q;
  always @(posedge clk) begin
    if (rst) begin
      p_valid_q <= 1'b0;
      p_last_q  <= 1'b0;
    end else begin
      p_valid_q <= g_valid_q;
      p_last_q  <= g_last_q;
    end
    p_addr_q <= g_addr_q;
    px_q     <= px_d;
    pz_q     <= pz_d;
  end

  // The alignment constants of the descriptor, registered (the ports are stable from start, the first element
  // reaches stage A MEM_LAT + 1 cycles later): right-shift amounts (used when the alignment is < 0) and the
  // rounding halves.
  reg [6:0]               rx_q;
  reg [6:0]               rz_q;
  reg signed [ACC_W-1:0]  half_x_q;
  reg signed [ACC_W-1:0]  half_z_q;
  always @(posedge clk) begin
    rx_q     <= 7'd0 - align_x;
    rz_q     <= 7'd0 - align_z;
    // A right shift rounds half up (half an output LSB added first): a floor would be a bias of -1 for every
    // negative product. |p| <= 2^46 and the half is at most 2^46 (shift <= 47), so the sum fits ACC_W = 48 bits.
    half_x_q <= {{(ACC_W-1){1'b0}}, 1'b1} <<< (7'd0 - align_x - 7'd1);
    half_z_q <= {{(ACC_W-1){1'b0}}, 1'b1} <<< (7'd0 - align_z - 7'd1);
  end

  // ---- stage A: align both products to the common fraction (SPEC 5.2) ----
  wire signed [ACC_W-1:0] px_w = {{(ACC_W-PX_W){px_q[PX_W-1]}}, px_q};
  wire signed [ACC_W-1:0] pz_w = {{(ACC_W-PZ_W){pz_q[PZ_W-1]}}, pz_q};
  wire signed [ACC_W-1:0] tx = ax_s[6] ? ((px_w + half_x_q) >>> rx_q) : (px_w <<< align_x);
  wire signed [ACC_W-1:0] tz = az_s[6] ? ((pz_w + half_z_q) >>> rz_q) : (pz_w <<< align_z);

  reg                     t_valid_q;
  reg                     t_last_q;
  reg [ADDR_W-1:0]        t_addr_q;
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
    tx_q     <= tx;
    tz_q     <= tz;
  end

  // ---- stage S: add ----
  reg                     a_valid_q;
  reg                     a_last_q;
  reg [ADDR_W-1:0]        a_addr_q;
  reg [ACC_W-1:0]         acc_q;
  always @(posedge clk) begin
    if (rst) begin
      a_valid_q <= 1'b0;
      a_last_q  <= 1'b0;
    end else begin
      a_valid_q <= t_valid_q;
      a_last_q  <= t_last_q;
    end
    a_addr_q <= t_addr_q;
    acc_q    <= tx_q + tz_q;  // cannot wrap: the alignments were checked at start
  end

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
    .shift     (shift),
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
  tt_writeback #(
    .ADDR_W    (ADDR_W),
    .OUT_W     (OUT_W),
    .TAG_DELAY (RQ_LAT),
    .OLD_DELAY (4 + RQ_LAT)  // the old word arrives with the operands (stage G): stages M, A, S, the requantiser
  ) u_writeback (
    .clk        (clk),
    .rst        (rst),
    .clear      (run),
    .tag_fin    (a_valid_q && a_last_q),
    .tag_addr   (a_addr_q),
    .in_valid   (rq_valid),
    .rq_y       (rq_y),
    .rq_sat     (rq_sat),
    .old_data   (o_rd_data),
    .accumulate (is_acc),
    .out_w      (y_w),
    .wr_en      (o_wr_en),
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
