`default_nettype none
// tt_synth_probe: a SYNTHESIS MEASUREMENT WRAPPER, not the product.
//
// It exists so that scripts/synth.py can measure Fmax and resources of the accelerator's building blocks
// on real FPGA parts before the accelerator top exists. When the top exists, set "top" in
// scripts/synth_targets.json to it and this file can go.
//
// What it measures (the blocks in rtl/ that are worth measuring, wired the way the engine will use them):
//   operand RAM (DEPTH x LANES*B_W, one write port, one registered read port: block RAM)
//     -> tt_mac_array (LANES multiply-accumulate lanes, a broadcast, b per lane from the RAM)
//     -> drain mux (RQ_LANES accumulators per cycle)
//     -> tt_requant (RQ_LANES lanes, random bytes from tt_lfsr)
// What it adds only to be measurable, and what therefore inflates the figures a little:
//   - every input and output pin is registered, so pin-to-register paths do not set Fmax;
//   - operands arrive through a SI_W-bit serial shift register (LANES*B_W flip-flops) instead of hundreds
//     of pins, and a 3-bit op code selects what happens each cycle;
//   - every result bit (requantised values, saturation and error flags, LFSR state) is XOR-folded into
//     SO_W output pins, so no logic is unobservable and nothing is optimised away.
//
// Op codes (op, registered like every input):
//   0 NOP    1 SHIFT sr <= {sr, si}         2 WRITE mem[wa++] <= sr      3 MAC  acc += a * mem[ra++]
//   4 CLEAR  next MAC starts a new sum      5 CFG a, shift, mode <= sr   6 SEED lfsr seed <= sr
//   7 DRAIN  requantise accumulator group g++ (RQ_LANES lanes) into the output fold
module tt_synth_probe #(
  parameter integer LANES    = 8,    // MAC lanes
  parameter integer A_W      = 16,   // broadcast operand width
  parameter integer B_W      = 16,   // per-lane operand width (RAM word = LANES * B_W bits)
  parameter integer ACC_W    = 48,   // accumulator width (SPEC 1.2)
  parameter integer OUT_W    = 16,   // requantised output width
  parameter integer DEPTH    = 256,  // operand RAM words
  parameter integer RQ_LANES = 1,    // accumulators requantised per cycle; divides LANES; 1..16
  parameter integer SI_W     = 4,    // serial input pins
  parameter integer SO_W     = 8     // folded output pins
) (
  input  wire            clk,
  input  wire            rst,
  input  wire [2:0]      op,
  input  wire [SI_W-1:0] si,
  output wire [SO_W-1:0] so
);

  localparam integer WORD_W = LANES * B_W;
  localparam integer AW     = (DEPTH > 1) ? $clog2(DEPTH) : 1;
  localparam integer NG     = LANES / RQ_LANES;             // drain groups
  localparam integer GW     = (NG > 1) ? $clog2(NG) : 1;
  localparam integer CFG_W  = A_W + 8;                      // a, shift (7), mode (1)
  localparam integer SR_W   = (WORD_W > 32) ? ((WORD_W > CFG_W) ? WORD_W : CFG_W)
                                            : ((CFG_W > 32) ? CFG_W : 32);
  localparam integer FOLD_W = RQ_LANES * (OUT_W + 2) + 1 + 32;
  localparam [31:0]   NG_M1    = NG - 1;
  localparam [GW-1:0] GRP_LAST = NG_M1[GW-1:0];

  localparam [2:0] OP_SHIFT = 3'd1, OP_WRITE = 3'd2, OP_MAC = 3'd3, OP_CLEAR = 3'd4,
                   OP_CFG   = 3'd5, OP_SEED  = 3'd6, OP_DRAIN = 3'd7;

  generate
    if (RQ_LANES < 1 || RQ_LANES > 16 || (LANES % RQ_LANES) != 0) begin : g_bad_rq_lanes
      error_tt_synth_probe_RQ_LANES_must_divide_LANES_and_be_1_to_16 u_error ();
    end
    if (SR_W % SI_W != 0) begin : g_bad_si_w
      error_tt_synth_probe_SI_W_must_divide_the_shift_register_width u_error ();
    end
  endgenerate

  // ---- registered inputs ----
  reg [2:0]      op_q;
  reg [SI_W-1:0] si_q;
  always @(posedge clk) begin
    if (rst) begin
      op_q <= 3'd0;
    end else begin
      op_q <= op;
    end
    si_q <= si;
  end

  // ---- serial operand/config loader ----
  reg [SR_W-1:0] sr;
  always @(posedge clk) begin
    if (op_q == OP_SHIFT) begin
      sr <= {sr[SR_W-SI_W-1:0], si_q};
    end
  end

  reg [A_W-1:0] a_q;
  reg [6:0]     shift_q;
  reg           mode_q;
  always @(posedge clk) begin
    if (rst) begin
      a_q     <= {A_W{1'b0}};
      shift_q <= 7'd0;
      mode_q  <= 1'b0;
    end else if (op_q == OP_CFG) begin
      a_q     <= sr[A_W-1:0];
      shift_q <= sr[A_W +: 7];
      mode_q  <= sr[A_W + 7];
    end
  end

  // ---- operand RAM: one write port, one registered read port ----
  reg [WORD_W-1:0] mem [0:DEPTH-1];
  reg [WORD_W-1:0] rdata_q;
  reg [AW-1:0]     wa_q, ra_q;
  always @(posedge clk) begin
    if (op_q == OP_WRITE) begin
      mem[wa_q] <= sr[WORD_W-1:0];
    end
    if (op_q == OP_MAC) begin
      rdata_q <= mem[ra_q];
    end
  end
  always @(posedge clk) begin
    if (rst) begin
      wa_q <= {AW{1'b0}};
      ra_q <= {AW{1'b0}};
    end else begin
      if (op_q == OP_WRITE) wa_q <= wa_q + 1'b1;
      if (op_q == OP_MAC) ra_q <= ra_q + 1'b1;
      else if (op_q == OP_CLEAR) ra_q <= {AW{1'b0}};
    end
  end

  // ---- MAC array: en one cycle after the read, clear sticky until the next MAC ----
  reg mac_en_q, clear_pend_q;
  always @(posedge clk) begin
    if (rst) begin
      mac_en_q     <= 1'b0;
      clear_pend_q <= 1'b0;
    end else begin
      mac_en_q <= (op_q == OP_MAC);
      if (op_q == OP_CLEAR) clear_pend_q <= 1'b1;
      else if (mac_en_q) clear_pend_q <= 1'b0;
    end
  end

  wire [ACC_W*LANES-1:0] acc;
  tt_mac_array #(.LANES(LANES), .A_W(A_W), .B_W(B_W), .ACC_W(ACC_W)) u_mac (
    .clk(clk), .rst(rst), .en(mac_en_q), .clear(clear_pend_q), .a(a_q), .b(rdata_q), .acc(acc)
  );

  // ---- drain: RQ_LANES accumulators per cycle into the requantiser ----
  localparam integer DW = ACC_W * RQ_LANES;
  reg [GW-1:0] grp_q;
  reg [DW-1:0] drain_d, drain_q;
  reg          drain_v_q;
  integer      g;
  always @* begin  // AND-OR group mux (a constant-stride part select would add a multiplier)
    drain_d = {DW{1'b0}};
    for (g = 0; g < NG; g = g + 1) begin
      if (grp_q == g[GW-1:0]) drain_d = drain_d | acc[DW*g +: DW];
    end
  end
  always @(posedge clk) begin
    if (rst) begin
      grp_q     <= {GW{1'b0}};
      drain_v_q <= 1'b0;
    end else begin
      drain_v_q <= (op_q == OP_DRAIN);
      if (op_q == OP_DRAIN) grp_q <= (grp_q == GRP_LAST) ? {GW{1'b0}} : grp_q + 1'b1;
    end
    drain_q <= drain_d;
  end

  wire [8*RQ_LANES-1:0] rnd;
  wire [31:0]           lfsr_state;
  tt_lfsr #(.DRAWS(RQ_LANES)) u_lfsr (
    .clk(clk), .rst(rst), .seed_load(op_q == OP_SEED), .seed(sr[31:0]),
    .advance(drain_v_q && mode_q), .rnd(rnd), .state(lfsr_state)
  );

  wire                      rq_valid;
  wire [OUT_W*RQ_LANES-1:0] rq_y;
  wire [RQ_LANES-1:0]       rq_sat, rq_err;
  tt_requant #(.ACC_W(ACC_W), .OUT_W(OUT_W), .LANES(RQ_LANES)) u_rq (
    .clk(clk), .rst(rst), .in_valid(drain_v_q), .acc(drain_q),
    .shift({RQ_LANES{shift_q}}), .mode({RQ_LANES{mode_q}}), .rnd(rnd),
    .out_valid(rq_valid), .y(rq_y), .sat(rq_sat), .shift_err(rq_err)
  );

  // ---- registered, XOR-folded outputs ----
  wire [FOLD_W-1:0] fold_in = {lfsr_state, rq_valid, rq_err, rq_sat, rq_y};
  reg  [SO_W-1:0]   fold;
  integer           i;
  always @* begin
    fold = {SO_W{1'b0}};
    for (i = 0; i < FOLD_W; i = i + 1) begin
      fold[i % SO_W] = fold[i % SO_W] ^ fold_in[i];
    end
  end

  reg [SO_W-1:0] so_q;
  always @(posedge clk) begin
    so_q <= fold;
  end
  assign so = so_q;

endmodule
`default_nettype wire
