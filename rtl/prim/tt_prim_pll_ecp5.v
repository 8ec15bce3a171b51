`default_nettype none
// tt_prim_pll_ecp5: tt_prim_pll on a Lattice ECP5 EHXPLLL: clk_out = CLKOP = clk_in * CLKFB_DIV / CLKI_DIV, fed back
// from CLKOP (VCO = CLKOP * CLKOP_DIV), the dividers and phases as yowasp-ecppll prints them. The loop filter
// settings are ecppll's (instance attributes that nextpnr reads).
module tt_prim_pll_ecp5 #(
  parameter integer CLKI_DIV     = 1,
  parameter integer CLKFB_DIV    = 1,
  parameter integer CLKOP_DIV    = 1,
  parameter integer CLKOP_CPHASE = 0,
  parameter integer CLKOP_FPHASE = 0
) (
  input  wire clk_in,
  output wire clk_out,
  output wire locked
);

  wire [5:0] unused_out;  // the secondary outputs, the internal lock and feedback, the reference clock
  (* ICP_CURRENT = "12" *) (* LPF_RESISTOR = "8" *) (* MFG_ENABLE_FILTEROPAMP = "1" *) (* MFG_GMCREF_SEL = "2" *)
  EHXPLLL #(
    .PLLRST_ENA      ("DISABLED"),
    .INTFB_WAKE      ("DISABLED"),
    .STDBY_ENABLE    ("DISABLED"),
    .DPHASE_SOURCE   ("DISABLED"),
    .OUTDIVIDER_MUXA ("DIVA"),
    .OUTDIVIDER_MUXB ("DIVB"),
    .OUTDIVIDER_MUXC ("DIVC"),
    .OUTDIVIDER_MUXD ("DIVD"),
    .CLKI_DIV        (CLKI_DIV),
    .CLKOP_ENABLE    ("ENABLED"),
    .CLKOP_DIV       (CLKOP_DIV),
    .CLKOP_CPHASE    (CLKOP_CPHASE),
    .CLKOP_FPHASE    (CLKOP_FPHASE),
    .FEEDBK_PATH     ("CLKOP"),
    .CLKFB_DIV       (CLKFB_DIV)
  ) u_pll (
    .RST          (1'b0),
    .STDBY        (1'b0),
    .CLKI         (clk_in),
    .CLKOP        (clk_out),
    .CLKFB        (clk_out),
    .CLKINTFB     (unused_out[5]),
    .PHASESEL0    (1'b0),
    .PHASESEL1    (1'b0),
    .PHASEDIR     (1'b1),
    .PHASESTEP    (1'b1),
    .PHASELOADREG (1'b1),
    .PLLWAKESYNC  (1'b0),
    .ENCLKOP      (1'b0),
    .ENCLKOS      (1'b0),
    .ENCLKOS2     (1'b0),
    .ENCLKOS3     (1'b0),
    .CLKOS        (unused_out[0]),
    .CLKOS2       (unused_out[1]),
    .CLKOS3       (unused_out[2]),
    .INTLOCK      (unused_out[3]),
    .REFCLK       (unused_out[4]),
    .LOCK         (locked)
  );

endmodule
`default_nettype wire
