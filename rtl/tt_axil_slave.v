`default_nettype none
// tt_axil_slave: the host interface. An AXI4-Lite slave that turns host reads and writes into a simple bus to
// the register file and memory windows, one transaction at a time.
//
// AXI side: AW, W and AR each have a one-entry holding register (ready = the register is empty), so AW and W
// are taken independently, in any order and in different cycles. A write is ready once AW and W are both
// held, a read once AR is held. A transaction starts only when the bus is idle and no B or R response waits for
// the master (one transaction outstanding, end to end); when a write and a read are both ready, the kind not
// started last goes first, so a stream of one kind cannot starve the other. B and R are held until the
// master's ready. bresp / rresp are SLVERR (2'b10) when bus_err was high in the ack cycle, else OKAY.
// awprot / arprot and the byte offset addr[1:0] are ignored (word access; the strobes select bytes).
//
// Bus side: bus_req rises with bus_we, bus_addr (word address = AXI address >> 2), bus_wdata and bus_wstrb
// (both zero for a read) and they all hold until the cycle bus_ack is high (ack may come in the first req
// cycle or any number of cycles later); bus_rdata and bus_err are taken in the ack cycle. req drops the
// cycle after the ack.
//
// Latency (cycle 0: the last of AW and W, or AR, handshakes; ack delay d >= 0 cycles after req rises; idle
// slave): bus_req high in cycle 2, ack in cycle 2 + d, bvalid / rvalid in cycle 3 + d. After the B or R
// handshake in cycle k, a waiting transaction has req high in cycle k + 2. The holding registers of a
// transaction free up (ready high) the cycle after its ack.
module tt_axil_slave #(
  parameter integer ADDR_W = 20,  // AXI byte address width, 4..32
  parameter integer DATA_W = 32   // data width, 32 only
) (
  input  wire                clk,
  input  wire                rst,
  // AXI4-Lite slave
  input  wire [ADDR_W-1:0]   s_axil_awaddr,
  input  wire [2:0]          s_axil_awprot,
  input  wire                s_axil_awvalid,
  output wire                s_axil_awready,
  input  wire [DATA_W-1:0]   s_axil_wdata,
  input  wire [DATA_W/8-1:0] s_axil_wstrb,
  input  wire                s_axil_wvalid,
  output wire                s_axil_wready,
  output wire [1:0]          s_axil_bresp,
  output wire                s_axil_bvalid,
  input  wire                s_axil_bready,
  input  wire [ADDR_W-1:0]   s_axil_araddr,
  input  wire [2:0]          s_axil_arprot,
  input  wire                s_axil_arvalid,
  output wire                s_axil_arready,
  output wire [DATA_W-1:0]   s_axil_rdata,
  output wire [1:0]          s_axil_rresp,
  output wire                s_axil_rvalid,
  input  wire                s_axil_rready,
  // register bus
  output wire                bus_req,
  output wire                bus_we,
  output wire [ADDR_W-3:0]   bus_addr,
  output wire [DATA_W-1:0]   bus_wdata,
  output wire [DATA_W/8-1:0] bus_wstrb,
  input  wire                bus_ack,
  input  wire [DATA_W-1:0]   bus_rdata,
  input  wire                bus_err
);

  localparam integer WA_W = ADDR_W - 2;  // word address
  localparam integer STRB_W = DATA_W / 8;
  localparam [1:0] RESP_OKAY = 2'b00;
  localparam [1:0] RESP_SLVERR = 2'b10;

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator).
  generate
    if (ADDR_W < 4 || ADDR_W > 32) begin : g_bad_addr_w
      error_tt_axil_slave_ADDR_W_must_be_4_to_32 u_error ();
    end
    if (DATA_W != 32) begin : g_bad_data_w
      error_tt_axil_slave_DATA_W_must_be_32 u_error ();
    end
  endgenerate

  // ---- holding registers: one entry per request channel ----
  reg              aw_full_q;
  reg [WA_W-1:0]   aw_addr_q;
  reg              w_full_q;
  reg [DATA_W-1:0] w_data_q;
  reg [STRB_W-1:0] w_strb_q;
  reg              ar_full_q;
  reg [WA_W-1:0]   ar_addr_q;

  // ---- bus transaction and responses ----
  reg              req_q;
  reg              we_q;
  reg              last_wr_q;  // the last transaction started was a write: a read goes first on a tie
  reg              b_valid_q;
  reg [1:0]        b_resp_q;
  reg              r_valid_q;
  reg [DATA_W-1:0] r_data_q;
  reg [1:0]        r_resp_q;

  wire aw_take = s_axil_awvalid && !aw_full_q;
  wire w_take  = s_axil_wvalid && !w_full_q;
  wire ar_take = s_axil_arvalid && !ar_full_q;
  wire done    = req_q && bus_ack;
  wire idle    = !req_q && !b_valid_q && !r_valid_q;
  wire wr_rdy  = aw_full_q && w_full_q;
  wire rd_rdy  = ar_full_q;
  wire start_wr = idle && wr_rdy && !(rd_rdy && last_wr_q);
  wire start_rd = idle && rd_rdy && !start_wr;

  // The holding registers stay full until the ack: they are the bus address and data, so they hold still.
  always @(posedge clk) begin
    if (rst) begin
      aw_full_q <= 1'b0;
      w_full_q  <= 1'b0;
      ar_full_q <= 1'b0;
    end else begin
      if (aw_take) begin
        aw_full_q <= 1'b1;
      end else if (done && we_q) begin
        aw_full_q <= 1'b0;
      end
      if (w_take) begin
        w_full_q <= 1'b1;
      end else if (done && we_q) begin
        w_full_q <= 1'b0;
      end
      if (ar_take) begin
        ar_full_q <= 1'b1;
      end else if (done && !we_q) begin
        ar_full_q <= 1'b0;
      end
    end
  end

  always @(posedge clk) begin
    if (aw_take) begin
      aw_addr_q <= s_axil_awaddr[ADDR_W-1:2];
    end
    if (w_take) begin
      w_data_q <= s_axil_wdata;
      w_strb_q <= s_axil_wstrb;
    end
    if (ar_take) begin
      ar_addr_q <= s_axil_araddr[ADDR_W-1:2];
    end
  end

  always @(posedge clk) begin
    if (rst) begin
      req_q     <= 1'b0;
      we_q      <= 1'b0;
      last_wr_q <= 1'b0;
    end else if (start_wr || start_rd) begin
      req_q     <= 1'b1;
      we_q      <= start_wr;
      last_wr_q <= start_wr;
    end else if (done) begin
      req_q <= 1'b0;
    end
  end

  always @(posedge clk) begin
    if (rst) begin
      b_valid_q <= 1'b0;
      r_valid_q <= 1'b0;
    end else begin
      if (done && we_q) begin
        b_valid_q <= 1'b1;
      end else if (s_axil_bready) begin
        b_valid_q <= 1'b0;
      end
      if (done && !we_q) begin
        r_valid_q <= 1'b1;
      end else if (s_axil_rready) begin
        r_valid_q <= 1'b0;
      end
    end
  end

  always @(posedge clk) begin
    if (done && we_q) begin
      b_resp_q <= bus_err ? RESP_SLVERR : RESP_OKAY;
    end
    if (done && !we_q) begin
      r_data_q <= bus_rdata;
      r_resp_q <= bus_err ? RESP_SLVERR : RESP_OKAY;
    end
  end

  assign s_axil_awready = !aw_full_q;
  assign s_axil_wready  = !w_full_q;
  assign s_axil_arready = !ar_full_q;
  assign s_axil_bvalid  = b_valid_q;
  assign s_axil_bresp   = b_resp_q;
  assign s_axil_rvalid  = r_valid_q;
  assign s_axil_rdata   = r_data_q;
  assign s_axil_rresp   = r_resp_q;

  // A W taken during a read must not show on the read's bus cycle: the write fields are zero for reads.
  assign bus_req   = req_q;
  assign bus_we    = we_q;
  assign bus_addr  = we_q ? aw_addr_q : ar_addr_q;
  assign bus_wdata = we_q ? w_data_q : {DATA_W{1'b0}};
  assign bus_wstrb = we_q ? w_strb_q : {STRB_W{1'b0}};

  wire unused_ok = ^{s_axil_awprot, s_axil_arprot, s_axil_awaddr[1:0], s_axil_araddr[1:0]};

endmodule
`default_nettype wire
