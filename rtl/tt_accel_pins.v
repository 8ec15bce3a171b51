`default_nettype none
// tt_accel_pins: the accelerator top (tt_accel) on a few pins, for boards whose package has far fewer pins than
// the 140-odd of tt_accel's AXI4-Lite slave (iCEBreaker, ULX3S). It is the top that scripts/synth.py
// synthesizes; the AXI4-Lite bus is reached through a small SPI-slave-to-AXI4-Lite-master bridge, so the
// figures are those of tt_accel plus the bridge (about 150 flip-flops and some LUTs). The sample stream has no
// pins here (its input is tied off, so synthesis removes its logic): samples go through the SPI bridge's memory
// window; an SoC top (an AXI DMA on Zynq) would connect it.
//
// Pins: clk (the board's oscillator), rst (active high, synchronous after a two-flip-flop synchronizer), spi_sck,
// spi_cs_n, spi_mosi, spi_miso, done, error (tt_accel's flags, registered).
//
// Clock: everything runs on the clock of a tt_prim_pll (TECH's PLL, the ECP5_* or ICE40_* dividers from the vendor
// tools, chosen by scripts/synth.py for the target's requested clock; the generic technology passes clk through),
// and is held in reset until the PLL has locked.
//
// SPI: mode 0 (sck idles low, both sides sample on the rising edge, the bridge changes miso after the falling
// edge), most significant bit first, one slave (miso is driven, 0 outside a response). sck, cs_n and mosi are
// sampled with clk through two-flip-flop synchronizers, so sck must be at most clk / 8 (sck high and low each
// at least 4 clk cycles). A frame is the bytes between cs_n falling and cs_n rising:
//   read : 0x00, A[23:16], A[15:8], A[7:0], one turnaround byte (any value), then 5 bytes out on miso:
//          STATUS, D[31:24], D[23:16], D[15:8], D[7:0]
//   write: 0x80, A[23:16], A[15:8], A[7:0], D[31:24], D[23:16], D[15:8], D[7:0], one turnaround byte,
//          then STATUS (and four 0 bytes, which the host may skip)
// A is tt_accel's AXI byte address (rtl/tt_accel.v has the map), D the 32-bit word (a write strobes all four
// bytes). The bridge starts the AXI4-Lite transaction when the last request bit arrives (read: the address;
// write: the data) and holds the response for the STATUS byte, which it takes at the end of the turnaround
// byte:
//   STATUS[7] complete: the transaction of this frame finished (its response is in [1:0] and D)
//   STATUS[6] overrun: the request came while an earlier transaction was still running and was dropped
//   STATUS[3] error pin, STATUS[2] done pin, STATUS[1:0] bresp / rresp (2'b10 SLVERR), STATUS[5:4] 0
// tt_accel answers within a few clk cycles and the turnaround byte lasts at least 64, so complete is 1 unless
// sck runs faster than allowed. Bits past the response and command bits [6:0] are ignored (keep them 0).
// One transaction is outstanding at a time; a frame cut short before its last request bit issues nothing.
module tt_accel_pins #(
  // tt_accel's parameters, passed through (scripts/synth.py derives them from the model)
  parameter integer BANK_SHIFT   = 12,
  parameter integer ACT_DEPTH    = 4096,
  parameter integer ACT_WIDTH    = 16,
  parameter integer ACT_PORTS    = 2,
  parameter integer CORE_DEPTH   = 2048,
  parameter integer CORE_WIDTH   = 4,
  parameter integer CORE_PORTS   = 1,
  parameter integer MASTER_DEPTH = 2048,
  parameter integer MASTER_WIDTH = 8,
  parameter integer MASTER_PORTS = 1,
  parameter integer STATE_DEPTH  = 4096,
  parameter integer STATE_WIDTH  = 16,
  parameter integer STATE_PORTS  = 2,
  parameter integer MOMENT_DEPTH = 4096,
  parameter integer MOMENT_WIDTH = 32,
  parameter integer MOMENT_PORTS = 1,
  parameter integer PROG_AW      = 11,
  parameter integer PROG_DEPTH   = 2048,
  parameter integer RAM_BLOCK_BITS = 16384,
  parameter integer LANES        = 1,
  parameter integer BUF_DEPTH    = 1,
  parameter integer PRELOAD      = 1,
  parameter integer VEC          = 1,
  parameter integer VEC_BANKS    = 0,
  parameter integer DRAIN        = 1,
  parameter integer ACC_W        = 48,
  parameter integer ADAM         = 0,
  parameter integer RANK         = 0,
  // the technology of the memories, multipliers and PLL (rtl/prim/), and the PLL's dividers (tt_prim_pll)
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
  input  wire clk_osc,
  input  wire rst,
  input  wire spi_sck,
  input  wire spi_cs_n,
  input  wire spi_mosi,
  output wire spi_miso,
  output wire done,
  output wire error
);

  // ---- clock ----
  wire clk;  // the PLL's clock: every register below runs on it
  wire pll_locked;
  tt_prim_pll #(
    .TECH               (TECH),
    .ECP5_CLKI_DIV      (ECP5_CLKI_DIV),
    .ECP5_CLKFB_DIV     (ECP5_CLKFB_DIV),
    .ECP5_CLKOP_DIV     (ECP5_CLKOP_DIV),
    .ECP5_CLKOP_CPHASE  (ECP5_CLKOP_CPHASE),
    .ECP5_CLKOP_FPHASE  (ECP5_CLKOP_FPHASE),
    .ICE40_DIVR         (ICE40_DIVR),
    .ICE40_DIVF         (ICE40_DIVF),
    .ICE40_DIVQ         (ICE40_DIVQ),
    .ICE40_FILTER_RANGE (ICE40_FILTER_RANGE)
  ) u_pll (
    .clk_in  (clk_osc),
    .clk_out (clk),
    .locked  (pll_locked)
  );

  // ---- synchronizers ----
  reg [1:0] rst_s;
  reg [2:0] sck_s;
  reg [1:0] cs_s;
  reg [1:0] mosi_s;
  always @(posedge clk) begin
    rst_s  <= {rst_s[0], rst || !pll_locked};
    sck_s  <= {sck_s[1:0], spi_sck};
    cs_s   <= {cs_s[0], spi_cs_n};
    mosi_s <= {mosi_s[0], spi_mosi};
  end
  wire rst_q    = rst_s[1];
  wire in_frame = !cs_s[1];
  wire sck_rise = in_frame && sck_s[1] && !sck_s[2];
  wire sck_fall = in_frame && !sck_s[1] && sck_s[2];
  wire mosi_b   = mosi_s[1];

  // ---- SPI frame: bit counter, receive and transmit shift registers ----
  reg  [6:0]  bit_cnt;      // request bits received in this frame (saturates at 127)
  reg  [30:0] rx;           // the last 31 bits received
  reg         frame_q;      // in_frame, delayed: its rise starts a frame
  reg         cmd_we_q;     // this frame is a write
  reg  [23:0] addr_q;
  reg  [39:0] tx;           // STATUS and D, shifted out on miso
  reg         miso_q;
  wire [31:0] word = {rx, mosi_b};  // the 32 bits ending with the bit of this sck rise
  wire        last_addr_bit = sck_rise && bit_cnt == 7'd31;
  wire        last_data_bit = sck_rise && bit_cnt == 7'd63 && cmd_we_q;
  wire        req_rd = last_addr_bit && !word[31];
  wire        req_wr = last_data_bit;
  wire [6:0]  rsp_at = cmd_we_q ? 7'd71 : 7'd39;  // the last turnaround bit
  wire        rsp_load = sck_rise && bit_cnt == rsp_at;
  wire        frame_start = in_frame && !frame_q;

  // ---- AXI4-Lite master ----
  reg         busy_q;       // a transaction is outstanding
  reg         cpl_q;        // this frame's transaction completed
  reg         ovr_q;        // this frame's request was dropped
  reg         awvalid_q, wvalid_q, arvalid_q;
  reg  [23:0] axi_addr_q;
  reg  [31:0] wdata_q;
  reg  [31:0] rdata_q;
  reg  [1:0]  resp_q;
  wire        awready, wready, bvalid, arready, rvalid;
  wire        axis_tready;  // the sample stream is not wired to pins
  wire [1:0]  bresp, rresp;
  wire [31:0] rdata;
  wire        acc_done, acc_error;
  reg         done_q, error_q;

  always @(posedge clk) begin
    frame_q <= in_frame;
    if (!in_frame) begin
      bit_cnt <= 7'd0;
    end else if (sck_rise) begin
      rx <= word[30:0];
      if (bit_cnt != 7'd127) begin
        bit_cnt <= bit_cnt + 7'd1;
      end
    end
    if (last_addr_bit) begin
      cmd_we_q <= word[31];
      addr_q <= word[23:0];
    end
    if (frame_start) begin
      tx <= 40'd0;
      miso_q <= 1'b0;
    end else if (rsp_load) begin
      tx <= {cpl_q, ovr_q, 2'b00, error_q, done_q, resp_q, rdata_q};
    end else if (sck_fall) begin
      miso_q <= tx[39];
      tx <= {tx[38:0], 1'b0};
    end
    if (!in_frame) begin
      miso_q <= 1'b0;
    end
  end

  always @(posedge clk) begin
    if (rst_q) begin
      busy_q <= 1'b0;
      cpl_q <= 1'b0;
      ovr_q <= 1'b0;
      awvalid_q <= 1'b0;
      wvalid_q <= 1'b0;
      arvalid_q <= 1'b0;
      resp_q <= 2'b00;
      rdata_q <= 32'd0;
    end else begin
      if (frame_start) begin
        cpl_q <= 1'b0;
        ovr_q <= 1'b0;
      end
      if (req_rd || req_wr) begin
        if (busy_q) begin
          ovr_q <= 1'b1;
        end else begin
          busy_q <= 1'b1;
          cpl_q <= 1'b0;
          resp_q <= 2'b00;
          rdata_q <= 32'd0;
          axi_addr_q <= req_wr ? addr_q : word[23:0];
          wdata_q <= word;
          awvalid_q <= req_wr;
          wvalid_q <= req_wr;
          arvalid_q <= req_rd;
        end
      end
      if (awvalid_q && awready) awvalid_q <= 1'b0;
      if (wvalid_q && wready) wvalid_q <= 1'b0;
      if (arvalid_q && arready) arvalid_q <= 1'b0;
      if (busy_q && bvalid) begin
        busy_q <= 1'b0;
        cpl_q <= 1'b1;
        resp_q <= bresp;
      end
      if (busy_q && rvalid) begin
        busy_q <= 1'b0;
        cpl_q <= 1'b1;
        resp_q <= rresp;
        rdata_q <= rdata;
      end
    end
    done_q <= acc_done;
    error_q <= acc_error;
  end

  tt_accel #(
    .BANK_SHIFT (BANK_SHIFT),
    .ACT_DEPTH (ACT_DEPTH), .ACT_WIDTH (ACT_WIDTH), .ACT_PORTS (ACT_PORTS),
    .CORE_DEPTH (CORE_DEPTH), .CORE_WIDTH (CORE_WIDTH), .CORE_PORTS (CORE_PORTS),
    .MASTER_DEPTH (MASTER_DEPTH), .MASTER_WIDTH (MASTER_WIDTH), .MASTER_PORTS (MASTER_PORTS),
    .STATE_DEPTH (STATE_DEPTH), .STATE_WIDTH (STATE_WIDTH), .STATE_PORTS (STATE_PORTS),
    .MOMENT_DEPTH (MOMENT_DEPTH), .MOMENT_WIDTH (MOMENT_WIDTH), .MOMENT_PORTS (MOMENT_PORTS),
    .PROG_AW (PROG_AW), .PROG_DEPTH (PROG_DEPTH), .RAM_BLOCK_BITS (RAM_BLOCK_BITS),
    .LANES (LANES), .BUF_DEPTH (BUF_DEPTH), .PRELOAD (PRELOAD), .VEC (VEC), .VEC_BANKS (VEC_BANKS), .DRAIN (DRAIN), .ACC_W (ACC_W),
    .ADAM (ADAM), .RANK (RANK),
    .TECH (TECH)
  ) u_accel (
    .clk (clk), .rst (rst_q),
    .s_axil_awaddr (axi_addr_q), .s_axil_awprot (3'b000), .s_axil_awvalid (awvalid_q), .s_axil_awready (awready),
    .s_axil_wdata (wdata_q), .s_axil_wstrb (4'hF), .s_axil_wvalid (wvalid_q), .s_axil_wready (wready),
    .s_axil_bresp (bresp), .s_axil_bvalid (bvalid), .s_axil_bready (1'b1),
    .s_axil_araddr (axi_addr_q), .s_axil_arprot (3'b000), .s_axil_arvalid (arvalid_q), .s_axil_arready (arready),
    .s_axil_rdata (rdata), .s_axil_rresp (rresp), .s_axil_rvalid (rvalid), .s_axil_rready (1'b1),
    .s_axis_tdata (16'd0), .s_axis_tvalid (1'b0), .s_axis_tready (axis_tready), .s_axis_tlast (1'b0),
    .done (acc_done), .error (acc_error)
  );

  wire unused_cmd = ^{word[30:24], axis_tready};

  assign spi_miso = miso_q;
  assign done = done_q;
  assign error = error_q;

endmodule
`default_nettype wire
