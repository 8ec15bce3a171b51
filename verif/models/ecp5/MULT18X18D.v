`default_nettype none
// MULT18X18D: a simulation model of the Lattice ECP5 18 x 18 multiplier, written from the ECP5 sysDSP usage guide
// (Lattice TN1267) and checked against yosys's mapping of inferred multiplies onto the cell (verif/models/tests).
// yosys ships only a black box of it. It covers what this project's netlists use: P = A * B, each operand signed
// or not by SIGNEDA and SIGNEDB, the input registers (REG_INPUTA_CLK, REG_INPUTB_CLK; the sign controls are
// registered with their operand), the pipeline register and the output register (REG_PIPELINE_CLK,
// REG_OUTPUT_CLK), each off ("NONE") or on CLK0 with the CE and RST it names (RST synchronous). C, the cascade and
// the shift chains are not modelled: a register on another clock stops the simulation.
`timescale 1ns / 1ps
/* verilator lint_off WIDTHEXPAND */  // string parameters of any length from the instantiations
module MULT18X18D (
  input  wire A17, A16, A15, A14, A13, A12, A11, A10, A9, A8, A7, A6, A5, A4, A3, A2, A1, A0,
  input  wire B17, B16, B15, B14, B13, B12, B11, B10, B9, B8, B7, B6, B5, B4, B3, B2, B1, B0,
  input  wire C17, C16, C15, C14, C13, C12, C11, C10, C9, C8, C7, C6, C5, C4, C3, C2, C1, C0,
  input  wire SIGNEDA, SIGNEDB, SOURCEA, SOURCEB,
  input  wire CLK3, CLK2, CLK1, CLK0, CE3, CE2, CE1, CE0, RST3, RST2, RST1, RST0,
  input  wire SRIA17, SRIA16, SRIA15, SRIA14, SRIA13, SRIA12, SRIA11, SRIA10, SRIA9, SRIA8, SRIA7, SRIA6, SRIA5, SRIA4, SRIA3, SRIA2, SRIA1, SRIA0,
  input  wire SRIB17, SRIB16, SRIB15, SRIB14, SRIB13, SRIB12, SRIB11, SRIB10, SRIB9, SRIB8, SRIB7, SRIB6, SRIB5, SRIB4, SRIB3, SRIB2, SRIB1, SRIB0,
  output wire SROA17, SROA16, SROA15, SROA14, SROA13, SROA12, SROA11, SROA10, SROA9, SROA8, SROA7, SROA6, SROA5, SROA4, SROA3, SROA2, SROA1, SROA0,
  output wire SROB17, SROB16, SROB15, SROB14, SROB13, SROB12, SROB11, SROB10, SROB9, SROB8, SROB7, SROB6, SROB5, SROB4, SROB3, SROB2, SROB1, SROB0,
  output wire ROA17, ROA16, ROA15, ROA14, ROA13, ROA12, ROA11, ROA10, ROA9, ROA8, ROA7, ROA6, ROA5, ROA4, ROA3, ROA2, ROA1, ROA0,
  output wire ROB17, ROB16, ROB15, ROB14, ROB13, ROB12, ROB11, ROB10, ROB9, ROB8, ROB7, ROB6, ROB5, ROB4, ROB3, ROB2, ROB1, ROB0,
  output wire ROC17, ROC16, ROC15, ROC14, ROC13, ROC12, ROC11, ROC10, ROC9, ROC8, ROC7, ROC6, ROC5, ROC4, ROC3, ROC2, ROC1, ROC0,
  output wire P35, P34, P33, P32, P31, P30, P29, P28, P27, P26, P25, P24, P23, P22, P21, P20, P19, P18, P17, P16, P15, P14, P13, P12, P11, P10, P9, P8, P7, P6, P5, P4, P3, P2, P1, P0,
  output wire SIGNEDP
);
  parameter [159:0] REG_INPUTA_CLK = "NONE";
  parameter [159:0] REG_INPUTA_CE = "CE0";
  parameter [159:0] REG_INPUTA_RST = "RST0";
  parameter [159:0] REG_INPUTB_CLK = "NONE";
  parameter [159:0] REG_INPUTB_CE = "CE0";
  parameter [159:0] REG_INPUTB_RST = "RST0";
  parameter [159:0] REG_INPUTC_CLK = "NONE";
  parameter [159:0] REG_INPUTC_CE = "CE0";
  parameter [159:0] REG_INPUTC_RST = "RST0";
  parameter [159:0] REG_PIPELINE_CLK = "NONE";
  parameter [159:0] REG_PIPELINE_CE = "CE0";
  parameter [159:0] REG_PIPELINE_RST = "RST0";
  parameter [159:0] REG_OUTPUT_CLK = "NONE";
  parameter [159:0] REG_OUTPUT_CE = "CE0";
  parameter [159:0] REG_OUTPUT_RST = "RST0";
  parameter [159:0] CLK0_DIV = "ENABLED";
  parameter [159:0] CLK1_DIV = "ENABLED";
  parameter [159:0] CLK2_DIV = "ENABLED";
  parameter [159:0] CLK3_DIV = "ENABLED";
  parameter [159:0] HIGHSPEED_CLK = "NONE";
  parameter [159:0] GSR = "ENABLED";
  parameter [159:0] CAS_MATCH_REG = "FALSE";
  parameter [159:0] SOURCEB_MODE = "B_SHIFT";
  parameter [159:0] MULT_BYPASS = "DISABLED";
  parameter [159:0] RESETMODE = "SYNC";

  wire [17:0] a_in = {A17, A16, A15, A14, A13, A12, A11, A10, A9, A8, A7, A6, A5, A4, A3, A2, A1, A0};
  wire [17:0] b_in = {B17, B16, B15, B14, B13, B12, B11, B10, B9, B8, B7, B6, B5, B4, B3, B2, B1, B0};
  wire [3:0]  ce = {CE3, CE2, CE1, CE0};
  wire [3:0]  rst = {RST3, RST2, RST1, RST0};
  wire unused = ^{C17, C16, C15, C14, C13, C12, C11, C10, C9, C8, C7, C6, C5, C4, C3, C2, C1, C0, SOURCEA, SOURCEB, CLK3, CLK2, CLK1};
  assign {SROA17, SROA16, SROA15, SROA14, SROA13, SROA12, SROA11, SROA10, SROA9, SROA8, SROA7, SROA6, SROA5, SROA4, SROA3, SROA2, SROA1, SROA0} = 18'd0;
  assign {SROB17, SROB16, SROB15, SROB14, SROB13, SROB12, SROB11, SROB10, SROB9, SROB8, SROB7, SROB6, SROB5, SROB4, SROB3, SROB2, SROB1, SROB0} = 18'd0;
  assign {ROA17, ROA16, ROA15, ROA14, ROA13, ROA12, ROA11, ROA10, ROA9, ROA8, ROA7, ROA6, ROA5, ROA4, ROA3, ROA2, ROA1, ROA0} = 18'd0;
  assign {ROB17, ROB16, ROB15, ROB14, ROB13, ROB12, ROB11, ROB10, ROB9, ROB8, ROB7, ROB6, ROB5, ROB4, ROB3, ROB2, ROB1, ROB0} = 18'd0;
  assign {ROC17, ROC16, ROC15, ROC14, ROC13, ROC12, ROC11, ROC10, ROC9, ROC8, ROC7, ROC6, ROC5, ROC4, ROC3, ROC2, ROC1, ROC0} = 18'd0;

  // "CEn" / "RSTn" -> n
  function integer pin_of(input [159:0] name);
    pin_of = {24'd0, name[7:0]} - 32'd48;  // the digit's ASCII code less '0'
  endfunction
  function on_clk0(input [159:0] clk_name);
    on_clk0 = clk_name == "CLK0";
  endfunction
  initial begin
    if (!(REG_INPUTA_CLK == "NONE" || on_clk0(REG_INPUTA_CLK)) || !(REG_INPUTB_CLK == "NONE" ||
        on_clk0(REG_INPUTB_CLK)) || !(REG_PIPELINE_CLK == "NONE" || on_clk0(REG_PIPELINE_CLK)) ||
        !(REG_OUTPUT_CLK == "NONE" || on_clk0(REG_OUTPUT_CLK)) || RESETMODE != "SYNC") begin
      $display("ERROR: MULT18X18D model %m: registers on CLK1..3 or an asynchronous reset are not modelled");
      $finish;
    end
  end

  reg [18:0] a_q;  // {SIGNEDA, A}
  reg [18:0] b_q;
  reg [35:0] pipe_q;
  reg [35:0] out_q;
  wire [18:0] a_s = on_clk0(REG_INPUTA_CLK) ? a_q : {SIGNEDA, a_in};
  wire [18:0] b_s = on_clk0(REG_INPUTB_CLK) ? b_q : {SIGNEDB, b_in};
  wire signed [36:0] a_x = {{19{a_s[18] & a_s[17]}}, a_s[17:0]};
  wire signed [36:0] b_x = {{19{b_s[18] & b_s[17]}}, b_s[17:0]};
  wire signed [73:0] full = a_x * b_x;
  wire [35:0] prod = full[35:0];
  wire [35:0] piped = on_clk0(REG_PIPELINE_CLK) ? pipe_q : prod;
  assign {P35, P34, P33, P32, P31, P30, P29, P28, P27, P26, P25, P24, P23, P22, P21, P20, P19, P18, P17, P16, P15, P14, P13, P12, P11, P10, P9, P8, P7, P6, P5, P4, P3, P2, P1, P0} = on_clk0(REG_OUTPUT_CLK) ? out_q : piped;
  assign SIGNEDP = a_s[18] | b_s[18];

  always @(posedge CLK0) begin
    if (rst[pin_of(REG_INPUTA_RST)]) a_q <= 19'd0;
    else if (ce[pin_of(REG_INPUTA_CE)]) a_q <= {SIGNEDA, a_in};
    if (rst[pin_of(REG_INPUTB_RST)]) b_q <= 19'd0;
    else if (ce[pin_of(REG_INPUTB_CE)]) b_q <= {SIGNEDB, b_in};
    if (rst[pin_of(REG_PIPELINE_RST)]) pipe_q <= 36'd0;
    else if (ce[pin_of(REG_PIPELINE_CE)]) pipe_q <= prod;
    if (rst[pin_of(REG_OUTPUT_RST)]) out_q <= 36'd0;
    else if (ce[pin_of(REG_OUTPUT_CE)]) out_q <= piped;
  end

endmodule
`default_nettype wire
