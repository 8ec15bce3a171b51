`default_nettype none
// tt_prim_mul_ice40: tt_prim_mul on one Lattice iCE40 SB_MAC16 in its 16 x 16 multiplier mode (tt_prim_mul's ports
// and behaviour; A_W, B_W <= 16, sign-extended to 16 bits). The operand registers are the DSP's A and B input
// registers, the product register its 16 x 16 pipeline register (PIPELINE_16x16_MULT_REG2); the outputs read the
// product (TOPOUTPUT_SELECT = BOTOUTPUT_SELECT = 3).
module tt_prim_mul_ice40 #(
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

  generate
    if (A_W > 16 || B_W > 16) begin : g_bad_width
      error_tt_prim_mul_ice40_A_W_and_B_W_must_be_at_most_16 u_error ();
    end
  endgenerate

  wire [15:0] ma = {{(16-A_W+1){a[A_W-1]}}, a[A_W-2:0]};
  wire [15:0] mb = {{(16-B_W+1){b[B_W-1]}}, b[B_W-2:0]};
  wire [31:0] mp;
  wire [2:0]  unused_co;
  SB_MAC16 #(
    .A_REG                    ((IN_REG != 0) ? 1'b1 : 1'b0),
    .B_REG                    ((IN_REG != 0) ? 1'b1 : 1'b0),
    .PIPELINE_16x16_MULT_REG2 ((OUT_REG != 0) ? 1'b1 : 1'b0),
    .TOPOUTPUT_SELECT         (2'b11),
    .BOTOUTPUT_SELECT         (2'b11),
    .A_SIGNED                 (1'b1),
    .B_SIGNED                 (1'b1)
  ) u_mac (
    .CLK (clk), .CE (1'b1),
    .C (16'h0000), .A (ma), .B (mb), .D (16'h0000),
    .AHOLD (1'b0), .BHOLD (1'b0), .CHOLD (1'b0), .DHOLD (1'b0),
    .IRSTTOP (1'b0), .IRSTBOT (1'b0), .ORSTTOP (1'b0), .ORSTBOT (1'b0),
    .OLOADTOP (1'b0), .OLOADBOT (1'b0), .ADDSUBTOP (1'b0), .ADDSUBBOT (1'b0),
    .OHOLDTOP (1'b0), .OHOLDBOT (1'b0), .CI (1'b0), .ACCUMCI (1'b0), .SIGNEXTIN (1'b0),
    .O (mp), .CO (unused_co[0]), .ACCUMCO (unused_co[1]), .SIGNEXTOUT (unused_co[2])
  );
  assign p = mp[A_W+B_W-1:0];
  wire unused_p = ^mp;

endmodule
`default_nettype wire
