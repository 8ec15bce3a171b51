`default_nettype none
// tt_requant: requantisation RQ(acc, s, mode) -> OUT_W-bit signed, saturated (golden/SPEC.md section 2).
//
// Per lane: y = sat(floor((acc + bias) / 2^s)) for s > 0, sat(acc * 2^-s) for s <= 0, with
//   NEAREST    (mode 0): bias = 2^(s-1)
//   STOCHASTIC (mode 1): bias = floor((2r + 1) * 2^s / 2^9), r = the lane's random byte, a constant 1 below it.
// Both are a 9-bit fraction q placed just below the kept LSB, bias = floor(q * 2^s / 2^9): q = {r, 1} or
// q = 0x100 for NEAREST (2^(s-1) for s >= 1), so one bias shifter serves both modes. Both shift directions share one arithmetic right shifter: the sum is pre-shifted left
// by -SHIFT_MIN and then shifted right by s - SHIFT_MIN (0..63), which is exact for s <= 0.
//
// A shift outside [-16, 47] is an illegal op (the compiler never emits one): the lane raises shift_err,
// its y is 0 and sat is 0, so the error can never be mistaken for data.
//
// Pipeline: LATENCY = 3 cycles, fully pipelined (one set of LANES elements per cycle, no stall):
//   stage 1 registers acc + bias and the shift amount, stage 2 the shifted sum, stage 3 the saturated result
//   (the shifter and the saturation each get a cycle: together they make a path too long for the ECP5 clock).
// out_valid is in_valid delayed by LATENCY; data registers are not reset (only valid is).
module tt_requant #(
  parameter integer ACC_W = 48,  // accumulator width, 2..64
  parameter integer OUT_W = 16,  // output width, 2..32
  parameter integer LANES = 1    // elements per cycle, >= 1
) (
  input  wire                   clk,
  input  wire                   rst,
  input  wire                   in_valid,
  input  wire [ACC_W*LANES-1:0] acc,        // lane l in [ACC_W*l +: ACC_W], signed
  input  wire [7*LANES-1:0]     shift,      // lane l in [7*l +: 7], signed, legal -16..47
  input  wire [LANES-1:0]       mode,       // 0 nearest, 1 stochastic
  input  wire [8*LANES-1:0]     rnd,        // lane l random byte in [8*l +: 8] (used in mode 1)
  output wire                   out_valid,
  output wire [OUT_W*LANES-1:0] y,          // lane l in [OUT_W*l +: OUT_W], signed
  output wire [LANES-1:0]       sat,        // y was clamped
  output wire [LANES-1:0]       shift_err   // shift outside -16..47 (y forced to 0)
);

  localparam integer LATENCY = 3;  // in_valid -> out_valid, cycles (read by the testbench)

  localparam integer SHIFT_MIN = -16;
  localparam integer SHIFT_MAX = 47;
  localparam integer LSH = -SHIFT_MIN;  // left pre-shift so every shift becomes a right shift
  // Worst case of acc + bias: |acc| <= 2^(ACC_W-1), 0 <= bias < 2^SHIFT_MAX, so one bit above the wider
  // of the two (ACC_W, SHIFT_MAX + 1) cannot overflow.
  localparam integer SUM_W = ((ACC_W > SHIFT_MAX + 1) ? ACC_W : SHIFT_MAX + 1) + 1;
  localparam integer WIDE_W = SUM_W + LSH;  // pre-shifted sum; holds acc * 2^16 exactly

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator).
  generate
    if (ACC_W < 2 || ACC_W > 64) begin : g_bad_acc_w
      error_tt_requant_ACC_W_must_be_2_to_64 u_error ();
    end
    if (OUT_W < 2 || OUT_W > 32) begin : g_bad_out_w
      error_tt_requant_OUT_W_must_be_2_to_32 u_error ();
    end
    if (LANES < 1) begin : g_bad_lanes
      error_tt_requant_LANES_must_be_at_least_1 u_error ();
    end
  endgenerate

  localparam signed [WIDE_W-1:0] QMAX = (({{(WIDE_W-1){1'b0}}, 1'b1}) <<< (OUT_W - 1)) - 1;
  localparam signed [WIDE_W-1:0] QMIN = -(({{(WIDE_W-1){1'b0}}, 1'b1}) <<< (OUT_W - 1));

  tt_delay #(
    .WIDTH (1),
    .DEPTH (LATENCY),
    .RESET (1)
  ) u_valid (
    .clk (clk),
    .rst (rst),
    .d   (in_valid),
    .q   (out_valid)
  );

  genvar l;
  generate
    for (l = 0; l < LANES; l = l + 1) begin : g_lane
      // ---- stage 1: range check, bias, acc + bias ----
      wire signed [ACC_W-1:0] acc_l = acc[ACC_W*l +: ACC_W];
      wire signed [6:0]       s_l = shift[7*l +: 7];
      // The literals below are SHIFT_MIN / SHIFT_MAX (SPEC 2.1) sized to the 7-bit shift field.
      wire                    err_d = (s_l < -7'sd16) || (s_l > 7'sd47);
      wire                    s_pos = !s_l[6] && (s_l[5:0] != 6'd0);
      wire [8:0]              q_l = mode[l] ? {rnd[8*l +: 8], 1'b1} : 9'h100;
      // floor(q * 2^s / 2^9) = (q * 2^(SHIFT_MAX-9)) >> (SHIFT_MAX - s), for 1 <= s <= SHIFT_MAX.
      wire [SHIFT_MAX-1:0]    r_top = {q_l, {(SHIFT_MAX-9){1'b0}}};
      wire [5:0]              bias_rsh = 6'd47 - s_l[5:0];
      wire [SHIFT_MAX-1:0]    bias = s_pos ? (r_top >> bias_rsh) : {SHIFT_MAX{1'b0}};
      wire signed [SUM_W-1:0] sum_d = {{(SUM_W-ACC_W){acc_l[ACC_W-1]}}, acc_l}
                                      + $signed({{(SUM_W-SHIFT_MAX){1'b0}}, bias});
      // s - SHIFT_MIN in 0..63 for every legal s; 6-bit wrap-around gives it from s's low bits.
      wire [5:0]              rsh_d = s_l[5:0] + 6'd16;

      reg signed [SUM_W-1:0]  sum_q;
      reg [5:0]               rsh_q;
      reg                     err_q;
      always @(posedge clk) begin
        sum_q <= sum_d;
        err_q <= err_d;
      end
      // Each lane's shift amount is its own register, beside its shifter: a drain's lanes share one shift, and
      // yosys would merge their identical flip-flops into one net to every lane's shifter. (* keep *) stops that.
      (* keep *)
      always @(posedge clk) begin
        rsh_q <= rsh_d;
      end

      // ---- stage 2: shift ----
      wire signed [WIDE_W-1:0] wide = $signed({sum_q, {LSH{1'b0}}});
      reg signed [WIDE_W-1:0]  shifted_q;
      reg                      err2_q;
      always @(posedge clk) begin
        shifted_q <= wide >>> rsh_q;
        err2_q    <= err_q;
      end

      // ---- stage 3: saturate ----
      wire                     hi = shifted_q > QMAX;
      wire                     lo = shifted_q < QMIN;
      wire [OUT_W-1:0]         y_d = err2_q ? {OUT_W{1'b0}} :
                                     hi     ? QMAX[OUT_W-1:0] :
                                     lo     ? QMIN[OUT_W-1:0] : shifted_q[OUT_W-1:0];
      wire                     sat_d = !err2_q && (hi || lo);

      reg [OUT_W-1:0]          y_q;
      reg                      sat_q;
      reg                      shift_err_q;
      always @(posedge clk) begin
        y_q         <= y_d;
        sat_q       <= sat_d;
        shift_err_q <= err2_q;
      end

      assign y[OUT_W*l +: OUT_W] = y_q;
      assign sat[l]              = sat_q;
      assign shift_err[l]        = shift_err_q;
    end
  endgenerate

endmodule
`default_nettype wire
