`default_nettype none
// tt_prim_mul_generic: tt_prim_mul as an inferred signed multiply with fabric registers (tt_prim_mul's ports and
// behaviour).
module tt_prim_mul_generic #(
  parameter integer A_W     = 16,
  parameter integer B_W     = 16,
  parameter integer IN_REG  = 0,
  parameter integer OUT_REG = 0
) (
  input  wire               clk,
  input  wire [A_W-1:0]     a,
  input  wire [B_W-1:0]     b,
  output wire [A_W+B_W-1:0] p
);

  wire unused_clk = clk;  // without registers
  wire [A_W-1:0] mul_a;
  wire [B_W-1:0] mul_b;
  generate
    if (IN_REG != 0) begin : g_in_reg
      reg [A_W-1:0] a_q;
      reg [B_W-1:0] b_q;
      always @(posedge clk) begin
        a_q <= a;
        b_q <= b;
      end
      assign mul_a = a_q;
      assign mul_b = b_q;
    end else begin : g_in_direct
      assign mul_a = a;
      assign mul_b = b;
    end
  endgenerate

  wire signed [A_W+B_W-1:0] prod = $signed(mul_a) * $signed(mul_b);
  generate
    if (OUT_REG != 0) begin : g_out_reg
      reg [A_W+B_W-1:0] p_q;
      always @(posedge clk) begin
        p_q <= prod;
      end
      assign p = p_q;
    end else begin : g_out_direct
      assign p = prod;
    end
  endgenerate

endmodule
`default_nettype wire
