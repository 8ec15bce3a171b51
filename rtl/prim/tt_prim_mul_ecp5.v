`default_nettype none
// tt_prim_mul_ecp5: tt_prim_mul on one Lattice ECP5 MULT18X18D (tt_prim_mul's ports and behaviour; A_W, B_W <= 18,
// sign-extended to the multiplier's 18 bits). The operand registers are the multiplier's input registers
// (REG_INPUTA_CLK, REG_INPUTB_CLK) and the product register its output register (REG_OUTPUT_CLK), all on CLK0 with
// CE0 high and RST0 low: with both, clock-to-out is a register's (ECP5 data sheet: about 0.7 ns) instead of the
// combinational multiply's (about 3.9 ns). nextpnr wants one net on CLK0, CE0 and RST0 of the multipliers that share a DSP block: every instance
// connects the same ones.
module tt_prim_mul_ecp5 #(
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
    if (A_W > 18 || B_W > 18) begin : g_bad_width
      error_tt_prim_mul_ecp5_A_W_and_B_W_must_be_at_most_18 u_error ();
    end
  endgenerate

  wire [17:0] ma = {{(18-A_W+1){a[A_W-1]}}, a[A_W-2:0]};
  wire [17:0] mb = {{(18-B_W+1){b[B_W-1]}}, b[B_W-2:0]};
  wire [17:0] zero18 = 18'd0;
  wire [35:0] mp;
  wire [89:0] unused_rout;  // the operand and shift-chain outputs: ROA, ROB, ROC, SROA, SROB
  wire        unused_signedp;
  // SRIA and SRIB (the shift chain's inputs) stay unconnected: nextpnr cannot route constants to them.
  /* verilator lint_off PINMISSING */
  MULT18X18D #(
    .REG_INPUTA_CLK   ((IN_REG != 0) ? "CLK0" : "NONE"),
    .REG_INPUTB_CLK   ((IN_REG != 0) ? "CLK0" : "NONE"),
    .REG_PIPELINE_CLK ("NONE"),
    .REG_OUTPUT_CLK   ((OUT_REG != 0) ? "CLK0" : "NONE"),
    .REG_INPUTA_CE    ("CE0"),
    .REG_INPUTB_CE    ("CE0"),
    .REG_OUTPUT_CE    ("CE0"),
    .REG_INPUTA_RST   ("RST0"),
    .REG_INPUTB_RST   ("RST0"),
    .REG_OUTPUT_RST   ("RST0"),
    .SOURCEB_MODE     ("B_INPUT"),
    .RESETMODE        ("SYNC"),
    .GSR              ("DISABLED")
  ) u_mult (
    .A17(ma[17]), .A16(ma[16]), .A15(ma[15]), .A14(ma[14]), .A13(ma[13]), .A12(ma[12]),
    .A11(ma[11]), .A10(ma[10]), .A9(ma[9]), .A8(ma[8]), .A7(ma[7]), .A6(ma[6]), .A5(ma[5]),
    .A4(ma[4]), .A3(ma[3]), .A2(ma[2]), .A1(ma[1]), .A0(ma[0]),
    .B17(mb[17]), .B16(mb[16]), .B15(mb[15]), .B14(mb[14]), .B13(mb[13]), .B12(mb[12]),
    .B11(mb[11]), .B10(mb[10]), .B9(mb[9]), .B8(mb[8]), .B7(mb[7]), .B6(mb[6]), .B5(mb[5]),
    .B4(mb[4]), .B3(mb[3]), .B2(mb[2]), .B1(mb[1]), .B0(mb[0]),
    .C17(zero18[17]), .C16(zero18[16]), .C15(zero18[15]), .C14(zero18[14]), .C13(zero18[13]),
    .C12(zero18[12]), .C11(zero18[11]), .C10(zero18[10]), .C9(zero18[9]), .C8(zero18[8]),
    .C7(zero18[7]), .C6(zero18[6]), .C5(zero18[5]), .C4(zero18[4]), .C3(zero18[3]), .C2(zero18[2]),
    .C1(zero18[1]), .C0(zero18[0]),
    .SIGNEDA(1'b1), .SIGNEDB(1'b1), .SOURCEA(1'b0), .SOURCEB(1'b0),
    .CLK0(clk), .CLK1(1'b0), .CLK2(1'b0), .CLK3(1'b0), .CE0(1'b1), .CE1(1'b0), .CE2(1'b0), .CE3(1'b0),
    .RST0(1'b0), .RST1(1'b0), .RST2(1'b0), .RST3(1'b0),
    .ROA17(unused_rout[17]), .ROA16(unused_rout[16]), .ROA15(unused_rout[15]),
    .ROA14(unused_rout[14]), .ROA13(unused_rout[13]), .ROA12(unused_rout[12]),
    .ROA11(unused_rout[11]), .ROA10(unused_rout[10]), .ROA9(unused_rout[9]), .ROA8(unused_rout[8]),
    .ROA7(unused_rout[7]), .ROA6(unused_rout[6]), .ROA5(unused_rout[5]), .ROA4(unused_rout[4]),
    .ROA3(unused_rout[3]), .ROA2(unused_rout[2]), .ROA1(unused_rout[1]), .ROA0(unused_rout[0]),
    .ROB17(unused_rout[35]), .ROB16(unused_rout[34]), .ROB15(unused_rout[33]),
    .ROB14(unused_rout[32]), .ROB13(unused_rout[31]), .ROB12(unused_rout[30]),
    .ROB11(unused_rout[29]), .ROB10(unused_rout[28]), .ROB9(unused_rout[27]),
    .ROB8(unused_rout[26]), .ROB7(unused_rout[25]), .ROB6(unused_rout[24]), .ROB5(unused_rout[23]),
    .ROB4(unused_rout[22]), .ROB3(unused_rout[21]), .ROB2(unused_rout[20]), .ROB1(unused_rout[19]),
    .ROB0(unused_rout[18]),
    .ROC17(unused_rout[53]), .ROC16(unused_rout[52]), .ROC15(unused_rout[51]),
    .ROC14(unused_rout[50]), .ROC13(unused_rout[49]), .ROC12(unused_rout[48]),
    .ROC11(unused_rout[47]), .ROC10(unused_rout[46]), .ROC9(unused_rout[45]),
    .ROC8(unused_rout[44]), .ROC7(unused_rout[43]), .ROC6(unused_rout[42]), .ROC5(unused_rout[41]),
    .ROC4(unused_rout[40]), .ROC3(unused_rout[39]), .ROC2(unused_rout[38]), .ROC1(unused_rout[37]),
    .ROC0(unused_rout[36]),
    .SROA17(unused_rout[71]), .SROA16(unused_rout[70]), .SROA15(unused_rout[69]),
    .SROA14(unused_rout[68]), .SROA13(unused_rout[67]), .SROA12(unused_rout[66]),
    .SROA11(unused_rout[65]), .SROA10(unused_rout[64]), .SROA9(unused_rout[63]),
    .SROA8(unused_rout[62]), .SROA7(unused_rout[61]), .SROA6(unused_rout[60]),
    .SROA5(unused_rout[59]), .SROA4(unused_rout[58]), .SROA3(unused_rout[57]),
    .SROA2(unused_rout[56]), .SROA1(unused_rout[55]), .SROA0(unused_rout[54]),
    .SROB17(unused_rout[89]), .SROB16(unused_rout[88]), .SROB15(unused_rout[87]),
    .SROB14(unused_rout[86]), .SROB13(unused_rout[85]), .SROB12(unused_rout[84]),
    .SROB11(unused_rout[83]), .SROB10(unused_rout[82]), .SROB9(unused_rout[81]),
    .SROB8(unused_rout[80]), .SROB7(unused_rout[79]), .SROB6(unused_rout[78]),
    .SROB5(unused_rout[77]), .SROB4(unused_rout[76]), .SROB3(unused_rout[75]),
    .SROB2(unused_rout[74]), .SROB1(unused_rout[73]), .SROB0(unused_rout[72]),
    .P35(mp[35]), .P34(mp[34]), .P33(mp[33]), .P32(mp[32]), .P31(mp[31]), .P30(mp[30]),
    .P29(mp[29]), .P28(mp[28]), .P27(mp[27]), .P26(mp[26]), .P25(mp[25]), .P24(mp[24]),
    .P23(mp[23]), .P22(mp[22]), .P21(mp[21]), .P20(mp[20]), .P19(mp[19]), .P18(mp[18]),
    .P17(mp[17]), .P16(mp[16]), .P15(mp[15]), .P14(mp[14]), .P13(mp[13]), .P12(mp[12]),
    .P11(mp[11]), .P10(mp[10]), .P9(mp[9]), .P8(mp[8]), .P7(mp[7]), .P6(mp[6]), .P5(mp[5]),
    .P4(mp[4]), .P3(mp[3]), .P2(mp[2]), .P1(mp[1]), .P0(mp[0]),
    .SIGNEDP(unused_signedp)
  );
  /* verilator lint_on PINMISSING */
  assign p = mp[A_W+B_W-1:0];
  wire unused_p = ^mp;

endmodule
`default_nettype wire
