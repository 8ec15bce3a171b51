`default_nettype none
// tt_prim_mul: the technology layer's multiplier: p = a * b, both signed, exact (A_W + B_W bits), with optional
// operand registers (IN_REG) and a product register (OUT_REG), so the latency is IN_REG + OUT_REG cycles. The
// registers have no enable and no reset (the caller's control bits travel beside them). TECH picks the
// implementation:
//   "generic": an inferred multiply and fabric registers (tt_prim_mul_generic);
//   "ecp5":    a MULT18X18D with its input and output registers (tt_prim_mul_ecp5), A_W, B_W <= 18;
//   "ice40":   an SB_MAC16 with its input and 16x16 product registers (tt_prim_mul_ice40), A_W, B_W <= 16.
module tt_prim_mul #(
  parameter integer A_W     = 16,
  parameter integer B_W     = 16,
  parameter integer IN_REG  = 0,   // 1: operand registers
  parameter integer OUT_REG = 0,   // 1: a product register
  parameter [63:0] TECH    = "generic"
) (
  input  wire                 clk,
  input  wire [A_W-1:0]       a,
  input  wire [B_W-1:0]       b,
  output wire [A_W+B_W-1:0]   p
);

  generate
    if (A_W < 2 || B_W < 2 || A_W > 32 || B_W > 32) begin : g_bad_width
      error_tt_prim_mul_A_W_and_B_W_must_be_2_to_32 u_error ();
    end
    if (IN_REG < 0 || IN_REG > 1 || OUT_REG < 0 || OUT_REG > 1) begin : g_bad_reg
      error_tt_prim_mul_IN_REG_and_OUT_REG_must_be_0_or_1 u_error ();
    end

    if (TECH == "generic") begin : g_generic
      tt_prim_mul_generic #(
        .A_W (A_W), .B_W (B_W), .IN_REG (IN_REG), .OUT_REG (OUT_REG)
      ) u_mul (.clk (clk), .a (a), .b (b), .p (p));
    end else if (TECH == "ecp5") begin : g_ecp5
      tt_prim_mul_ecp5 #(
        .A_W (A_W), .B_W (B_W), .IN_REG (IN_REG), .OUT_REG (OUT_REG)
      ) u_mul (.clk (clk), .a (a), .b (b), .p (p));
    end else if (TECH == "ice40") begin : g_ice40
      tt_prim_mul_ice40 #(
        .A_W (A_W), .B_W (B_W), .IN_REG (IN_REG), .OUT_REG (OUT_REG)
      ) u_mul (.clk (clk), .a (a), .b (b), .p (p));
    end else begin : g_bad_tech
      error_tt_prim_mul_TECH_must_be_generic_ecp5_or_ice40 u_error ();
    end
  endgenerate

endmodule
`default_nettype wire
