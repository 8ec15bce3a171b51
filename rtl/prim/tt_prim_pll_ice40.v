`default_nettype none
// tt_prim_pll_ice40: tt_prim_pll on a Lattice iCE40 SB_PLL40_PAD in simple feedback: clk_out = clk_in * (DIVF + 1) /
// ((DIVR + 1) * 2^DIVQ), the dividers and the loop filter range as icepll prints them. clk_in must be the PLL's pad
// (on the iCEBreaker, the 12 MHz oscillator's pin 35).
module tt_prim_pll_ice40 #(
  parameter integer DIVR         = 0,
  parameter integer DIVF         = 0,
  parameter integer DIVQ         = 1,
  parameter integer FILTER_RANGE = 1
) (
  input  wire clk_in,
  output wire clk_out,
  output wire locked
);

  wire [1:0] unused_out;
  SB_PLL40_PAD #(
    .FEEDBACK_PATH ("SIMPLE"),
    .DIVR          (DIVR),
    .DIVF          (DIVF),
    .DIVQ          (DIVQ),
    .FILTER_RANGE  (FILTER_RANGE)
  ) u_pll (
    .PACKAGEPIN    (clk_in),
    .PLLOUTGLOBAL  (clk_out),
    .PLLOUTCORE    (unused_out[0]),
    .LOCK          (locked),
    .RESETB        (1'b1),
    .BYPASS        (1'b0),
    .EXTFEEDBACK   (1'b0),
    .DYNAMICDELAY  (8'd0),
    .LATCHINPUTVALUE (1'b0),
    .SDI           (1'b0),
    .SCLK          (1'b0),
    .SDO           (unused_out[1])
  );

endmodule
`default_nettype wire
