`default_nettype none
// tt_prim_pll: the technology layer's clock generator: clk_out from the board's oscillator clk_in, and locked, high
// once clk_out is stable. TECH picks the implementation:
//   "generic": clk_out is clk_in and locked is 1 (simulation, and parts without a PLL model here);
//   "ecp5":    an EHXPLLL (tt_prim_pll_ecp5) with the ECP5_* dividers;
//   "ice40":   an SB_PLL40_PAD (tt_prim_pll_ice40) with the ICE40_* dividers (clk_in must come from a pin).
// The dividers are the vendor tools' (yowasp-ecppll, icepll): scripts/synth.py runs them for the target's requested
// clock and passes what they print, so the clock the build asks for and the clock the PLL makes are one number.
module tt_prim_pll #(
  parameter [63:0] TECH               = "generic",
  parameter integer ECP5_CLKI_DIV      = 1,
  parameter integer ECP5_CLKFB_DIV     = 1,
  parameter integer ECP5_CLKOP_DIV     = 1,
  parameter integer ECP5_CLKOP_CPHASE  = 0,
  parameter integer ECP5_CLKOP_FPHASE  = 0,
  parameter integer ICE40_DIVR         = 0,
  parameter integer ICE40_DIVF         = 0,
  parameter integer ICE40_DIVQ         = 1,
  parameter integer ICE40_FILTER_RANGE = 1
) (
  input  wire clk_in,
  output wire clk_out,
  output wire locked
);

  // each implementation reads its own family's dividers
  wire [31:0] unused_dividers = ECP5_CLKI_DIV + ECP5_CLKFB_DIV + ECP5_CLKOP_DIV + ECP5_CLKOP_CPHASE + ECP5_CLKOP_FPHASE +
                                ICE40_DIVR + ICE40_DIVF + ICE40_DIVQ + ICE40_FILTER_RANGE;
  generate
    if (TECH == "generic") begin : g_generic
      assign clk_out = clk_in;
      assign locked  = 1'b1;
    end else if (TECH == "ecp5") begin : g_ecp5
      tt_prim_pll_ecp5 #(
        .CLKI_DIV     (ECP5_CLKI_DIV),
        .CLKFB_DIV    (ECP5_CLKFB_DIV),
        .CLKOP_DIV    (ECP5_CLKOP_DIV),
        .CLKOP_CPHASE (ECP5_CLKOP_CPHASE),
        .CLKOP_FPHASE (ECP5_CLKOP_FPHASE)
      ) u_pll (.clk_in (clk_in), .clk_out (clk_out), .locked (locked));
    end else if (TECH == "ice40") begin : g_ice40
      tt_prim_pll_ice40 #(
        .DIVR         (ICE40_DIVR),
        .DIVF         (ICE40_DIVF),
        .DIVQ         (ICE40_DIVQ),
        .FILTER_RANGE (ICE40_FILTER_RANGE)
      ) u_pll (.clk_in (clk_in), .clk_out (clk_out), .locked (locked));
    end else begin : g_bad_tech
      error_tt_prim_pll_TECH_must_be_generic_ecp5_or_ice40 u_error ();
    end
  endgenerate

endmodule
`default_nettype wire
