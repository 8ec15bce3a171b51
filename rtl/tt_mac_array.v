`default_nettype none
// tt_mac_array: LANES multiply-accumulate lanes, the datapath of the contraction engine.
//
// On a cycle with en high, every lane l does
//   acc[l] <= (clear ? 0 : acc[l]) + a * b[l]      (signed, exact; a is broadcast, b is per lane)
// clear starts a new dot product (its first product is loaded, not added). The accumulators are visible
// on acc one cycle after the en edge (latency 1) and hold while en is low. rst zeroes them.
//
// One multiply and one add per lane, with the product feeding the accumulator register directly: the
// multiply-add-register shape that maps onto a DSP slice (SB_MAC16, DSP48E2, ECP5 MULT18+ALU54).
// The accumulator never wraps in a legal program (SPEC 1.2: the compiler bounds every reduction).
module tt_mac_array #(
  parameter integer LANES = 1,   // MAC lanes, >= 1
  parameter integer A_W   = 16,  // broadcast operand width, 2..32
  parameter integer B_W   = 16,  // per-lane operand width, 2..32
  parameter integer ACC_W = 48   // accumulator width, A_W + B_W < ACC_W <= 64
) (
  input  wire                   clk,
  input  wire                   rst,
  input  wire                   en,     // accumulate this cycle
  input  wire                   clear,  // with en: start a new dot product
  input  wire [A_W-1:0]         a,      // signed, broadcast to every lane
  input  wire [B_W*LANES-1:0]   b,      // lane l in [B_W*l +: B_W], signed
  output wire [ACC_W*LANES-1:0] acc     // lane l in [ACC_W*l +: ACC_W], signed
);

  localparam integer PROD_W = A_W + B_W;

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator).
  generate
    if (LANES < 1) begin : g_bad_lanes
      error_tt_mac_array_LANES_must_be_at_least_1 u_error ();
    end
    if (A_W < 2 || A_W > 32) begin : g_bad_a_w
      error_tt_mac_array_A_W_must_be_2_to_32 u_error ();
    end
    if (B_W < 2 || B_W > 32) begin : g_bad_b_w
      error_tt_mac_array_B_W_must_be_2_to_32 u_error ();
    end
    // At least one bit of headroom above a product, so a clear + one product can never wrap.
    if (ACC_W <= A_W + B_W || ACC_W > 64) begin : g_bad_acc_w
      error_tt_mac_array_ACC_W_must_exceed_A_W_plus_B_W_and_be_at_most_64 u_error ();
    end
  endgenerate

  genvar l;
  generate
    for (l = 0; l < LANES; l = l + 1) begin : g_lane
      wire signed [PROD_W-1:0] prod = $signed(a) * $signed(b[B_W*l +: B_W]);
      reg  signed [ACC_W-1:0]  acc_q;
      wire signed [ACC_W-1:0]  base = clear ? {ACC_W{1'b0}} : acc_q;
      wire signed [ACC_W-1:0]  acc_d = base + {{(ACC_W-PROD_W){prod[PROD_W-1]}}, prod};

      always @(posedge clk) begin
        if (rst) begin
          acc_q <= {ACC_W{1'b0}};
        end else if (en) begin
          acc_q <= acc_d;
        end
      end

      assign acc[ACC_W*l +: ACC_W] = acc_q;
    end
  endgenerate

endmodule
`default_nettype wire
